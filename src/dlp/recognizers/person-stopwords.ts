/**
 * Capitalised words that some locale lists as a first or last name but that
 * a prompt far more often uses as something else: sentence-initial function
 * words, months and days, virtues and colours, titles, places, products and
 * programming words. They are never evidence of a name.
 */
export const COMMON_CAPITALISED: ReadonlySet<string> = new Set([
  'I', 'A', 'An', 'The', 'This', 'That', 'These', 'Those', 'And', 'Or', 'But', 'If', 'So', 'To', 'In', 'On', 'At', 'By', 'For', 'With', 'As', 'Is', 'It', 'Its',
  'We', 'You', 'He', 'She', 'They', 'My', 'Our', 'Your', 'His', 'Her', 'Their', 'Please', 'Thanks', 'Thank', 'Hi', 'Hello', 'Hey', 'Dear', 'Yes', 'No', 'Ok', 'Okay',
  'Can', 'Could', 'Would', 'Should', 'Will', 'Shall', 'May', 'Might', 'Must', 'Do', 'Does', 'Did', 'Have', 'Has', 'Had', 'Be', 'Been', 'Are', 'Was', 'Were',
  'Here', 'There', 'What', 'When', 'Where', 'Why', 'How', 'Who', 'Which', 'Then', 'Now', 'Also', 'Just', 'Only', 'All', 'Any', 'Some', 'Each', 'Every', 'Not',
  'New', 'Old', 'First', 'Last', 'Next', 'Best', 'Kind', 'Good', 'Great', 'Big', 'Little', 'Long', 'Short', 'Young', 'Small', 'Grand', 'Royal', 'Noble', 'Rich', 'Strong',
  'January', 'February', 'March', 'April', 'June', 'July', 'August', 'September', 'October', 'November', 'December',
  'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday', 'Summer', 'Winter', 'Spring', 'Autumn', 'Christmas', 'Easter',
  'Hope', 'Grace', 'Joy', 'Faith', 'Charity', 'Patience', 'Honor', 'Honour', 'Justice', 'Liberty', 'Victory', 'Unity', 'Destiny', 'Harmony', 'Mercy', 'Trinity',
  'Rose', 'Lily', 'Ivy', 'Violet', 'Daisy', 'Iris', 'Holly', 'Hazel', 'Olive', 'Amber', 'Ruby', 'Pearl', 'Crystal', 'Jade', 'Coral', 'Dawn', 'Sky', 'Rain', 'Storm', 'Star', 'Sunny', 'River', 'Forest', 'Ocean', 'Sea', 'Stone', 'Rock', 'Wood', 'Hill', 'Field', 'Lake', 'Brook', 'Bay',
  'Brown', 'White', 'Black', 'Green', 'Gray', 'Grey', 'Red', 'Blue', 'Gold', 'Silver', 'Orange',
  'King', 'Queen', 'Prince', 'Princess', 'Duke', 'Earl', 'Baron', 'Knight', 'Bishop', 'Pope', 'Major', 'General', 'Captain', 'Marshal', 'Sheriff', 'Judge', 'Dean', 'Chancellor', 'Senior', 'Junior', 'Doctor', 'Professor',
  'Angel', 'Baby', 'Love', 'Sweet', 'Happy', 'Lucky', 'Honey', 'Candy', 'Cookie', 'Sugar', 'Page', 'Bell', 'Ford', 'Banks', 'Price', 'Cash', 'Money', 'Case', 'Lane', 'Street', 'Park', 'Parks', 'Church', 'Hall', 'House', 'Castle', 'Gate', 'Bridge', 'Port', 'Mill', 'Mills', 'Cross', 'Way',
  'Java', 'Python', 'Swift', 'Rust', 'Go', 'Ruby', 'Perl', 'Julia', 'Dart', 'Kotlin', 'Scala', 'Elixir', 'Docker', 'Node', 'React', 'Angular', 'Vue', 'Linux', 'Windows', 'Apple', 'Amazon', 'Google', 'Oracle', 'Chrome', 'Safari', 'Excel', 'Word', 'Teams', 'Slack', 'Jira', 'Redis', 'Kafka', 'Jenkins', 'Ansible', 'Alexa', 'Siri', 'Cortana', 'Tesla', 'Mercedes', 'Porsche', 'Toyota', 'Honda',
  'Paris', 'London', 'Berlin', 'Madrid', 'Rome', 'Vienna', 'Sydney', 'Florence', 'Victoria', 'Georgia', 'Virginia', 'Carolina', 'Dakota', 'Montana', 'Nevada', 'Indiana', 'Jordan', 'Israel', 'China', 'India', 'Kenya', 'Chad', 'Mali', 'Niger', 'Lebanon', 'Houston', 'Austin', 'Dallas', 'Phoenix', 'Denver', 'Orlando', 'Lincoln', 'Washington', 'Jackson', 'Madison', 'Cleveland', 'Charlotte', 'Alexandria', 'Santiago', 'Paulo', 'Santos', 'Sofia', 'Lima', 'Quito', 'Adelaide', 'Regina', 'Hamilton', 'Wellington', 'Kingston', 'Essex', 'Kent', 'York', 'Chester',
  'Mr', 'Mrs', 'Ms', 'Miss', 'Mx', 'Dr', 'Prof', 'Sir', 'Herr', 'Frau', 'Sr', 'Sra', 'Mme', 'Mlle', 'Sig', 'Dott', 'Madam', 'Madame', 'Monsieur', 'Signora', 'Signor', 'Señor', 'Señora',
  'Error', 'Warning', 'Info', 'Debug', 'True', 'False', 'None', 'Null', 'Order', 'Card', 'Phone', 'Email', 'Mail', 'Name', 'Note', 'Summary', 'Team', 'Office', 'City', 'State', 'Bank', 'Account', 'Total', 'Message', 'Subject', 'Regards', 'Contact', 'Customer', 'Patient', 'Ticket', 'Refund', 'Transfer', 'Reminder', 'Angaben', 'Gentile', 'Fax', 'Tel', 'Mobile', 'Cell',
]);
