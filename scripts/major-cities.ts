/**
 * National capitals and the largest cities of each continent, in their
 * common English spelling, for scripts/build-place-names.ts: the locale
 * lists of @faker-js/faker cover some countries' towns closely and others
 * not at all. Written from general knowledge (public facts).
 */
export const MAJOR_CITIES: readonly string[] = [
  // Asia
  'Tokyo', 'Osaka', 'Yokohama', 'Nagoya', 'Sapporo', 'Fukuoka', 'Kyoto', 'Kobe', 'Seoul', 'Busan', 'Incheon', 'Beijing', 'Shanghai', 'Guangzhou', 'Shenzhen', 'Chongqing', 'Tianjin',
  'Wuhan', 'Chengdu', 'Nanjing', "Xi'an", 'Hangzhou', 'Hong Kong', 'Macau', 'Taipei', 'Kaohsiung', 'Mumbai', 'Delhi', 'New Delhi', 'Bengaluru', 'Bangalore', 'Hyderabad', 'Chennai', 'Kolkata',
  'Ahmedabad', 'Pune', 'Surat', 'Jaipur', 'Lucknow', 'Kanpur', 'Nagpur', 'Karachi', 'Lahore', 'Islamabad', 'Rawalpindi', 'Faisalabad', 'Peshawar', 'Dhaka', 'Chittagong', 'Kathmandu', 'Colombo',
  'Jakarta', 'Surabaya', 'Bandung', 'Medan', 'Bangkok', 'Chiang Mai', 'Phuket', 'Hanoi', 'Ho Chi Minh City', 'Saigon', 'Da Nang', 'Manila', 'Quezon City', 'Cebu', 'Davao', 'Kuala Lumpur',
  'Singapore', 'Phnom Penh', 'Vientiane', 'Yangon', 'Naypyidaw', 'Ulaanbaatar', 'Tashkent', 'Almaty', 'Astana', 'Bishkek', 'Dushanbe', 'Ashgabat', 'Kabul', 'Tehran', 'Mashhad', 'Isfahan',
  'Tabriz', 'Shiraz', 'Baghdad', 'Basra', 'Erbil', 'Riyadh', 'Jeddah', 'Mecca', 'Medina', 'Dubai', 'Abu Dhabi', 'Doha', 'Manama', 'Kuwait City', 'Muscat', "Sana'a", 'Amman', 'Beirut',
  'Damascus', 'Aleppo', 'Jerusalem', 'Tel Aviv', 'Haifa', 'Istanbul', 'Ankara', 'Izmir', 'Bursa', 'Antalya', 'Baku', 'Tbilisi', 'Yerevan',
  // Europe
  'London', 'Birmingham', 'Manchester', 'Liverpool', 'Leeds', 'Glasgow', 'Edinburgh', 'Bristol', 'Cardiff', 'Belfast', 'Dublin', 'Cork', 'Paris', 'Marseille', 'Lyon', 'Toulouse', 'Bordeaux',
  'Berlin', 'Hamburg', 'Munich', 'Cologne', 'Frankfurt', 'Stuttgart', 'Düsseldorf', 'Vienna', 'Zurich', 'Geneva', 'Bern', 'Amsterdam', 'Rotterdam', 'The Hague', 'Utrecht', 'Brussels', 'Antwerp',
  'Luxembourg', 'Copenhagen', 'Aarhus', 'Stockholm', 'Gothenburg', 'Malmö', 'Oslo', 'Bergen', 'Helsinki', 'Reykjavik', 'Tallinn', 'Riga', 'Vilnius', 'Warsaw', 'Kraków', 'Łódź', 'Wrocław', 'Gdańsk',
  'Prague', 'Brno', 'Bratislava', 'Budapest', 'Debrecen', 'Bucharest', 'Cluj-Napoca', 'Sofia', 'Plovdiv', 'Belgrade', 'Zagreb', 'Ljubljana', 'Sarajevo', 'Podgorica', 'Skopje', 'Tirana', 'Athens',
  'Thessaloniki', 'Nicosia', 'Valletta', 'Rome', 'Milan', 'Naples', 'Turin', 'Palermo', 'Florence', 'Venice', 'Bologna', 'Madrid', 'Barcelona', 'Valencia', 'Seville', 'Bilbao', 'Málaga',
  'Lisbon', 'Porto', 'Moscow', 'Saint Petersburg', 'Novosibirsk', 'Yekaterinburg', 'Kazan', 'Kyiv', 'Kiev', 'Kharkiv', 'Odesa', 'Lviv', 'Minsk', 'Chișinău',
  // Africa
  'Cairo', 'Alexandria', 'Giza', 'Lagos', 'Abuja', 'Kano', 'Ibadan', 'Port Harcourt', 'Kinshasa', 'Lubumbashi', 'Luanda', 'Addis Ababa', 'Nairobi', 'Mombasa', 'Dar es Salaam', 'Dodoma',
  'Kampala', 'Kigali', 'Khartoum', 'Johannesburg', 'Cape Town', 'Durban', 'Pretoria', 'Accra', 'Kumasi', 'Abidjan', 'Dakar', 'Bamako', 'Ouagadougou', 'Niamey', 'Conakry', 'Freetown', 'Monrovia',
  'Casablanca', 'Rabat', 'Marrakesh', 'Algiers', 'Tunis', 'Tripoli', 'Harare', 'Lusaka', 'Maputo', 'Antananarivo', 'Douala', 'Yaoundé', 'Mogadishu', 'Djibouti', 'Asmara',
  // Americas
  'New York', 'New York City', 'Los Angeles', 'Chicago', 'Houston', 'Phoenix', 'Philadelphia', 'San Antonio', 'San Diego', 'San Francisco', 'San Jose', 'Seattle', 'Boston', 'Miami', 'Atlanta',
  'Washington, D.C.', 'Detroit', 'Minneapolis', 'Las Vegas', 'Toronto', 'Montreal', 'Vancouver', 'Calgary', 'Ottawa', 'Edmonton', 'Mexico City', 'Ciudad de México', 'Guadalajara', 'Monterrey',
  'Puebla', 'Tijuana', 'Guatemala City', 'San Salvador', 'Tegucigalpa', 'Managua', 'San José', 'Panama City', 'Havana', 'Santo Domingo', 'Port-au-Prince', 'Kingston', 'San Juan', 'Bogotá',
  'Medellín', 'Cali', 'Caracas', 'Maracaibo', 'Quito', 'Guayaquil', 'Lima', 'La Paz', 'Santa Cruz', 'Santiago', 'Buenos Aires', 'Córdoba', 'Rosario', 'Montevideo', 'Asunción', 'São Paulo',
  'Rio de Janeiro', 'Brasília', 'Salvador', 'Fortaleza', 'Belo Horizonte', 'Manaus', 'Recife', 'Porto Alegre', 'Curitiba',
  // Oceania
  'Sydney', 'Melbourne', 'Brisbane', 'Perth', 'Adelaide', 'Canberra', 'Auckland', 'Wellington', 'Christchurch', 'Port Moresby', 'Suva',
];
