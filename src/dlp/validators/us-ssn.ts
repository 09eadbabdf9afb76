/**
 * Structural rules of US Social Security numbers (SSA): area 000, 666 and
 * 900-999 were never issued, nor group 00 or serial 0000; a few numbers are
 * well-known samples (the Woolworth card, advertising ranges) and the
 * ascending/repeated-digit strings people type as placeholders.
 */
const KNOWN_SAMPLES = new Set(['078051120', '219099999', '457555462', '123456789', '012345678', '987654321']);

export function ssnValid(digits: string): boolean {
  if (!/^\d{9}$/.test(digits)) return false;
  const area = Number(digits.slice(0, 3));
  const group = Number(digits.slice(3, 5));
  const serial = Number(digits.slice(5));
  if (area === 0 || area === 666 || area >= 900) return false;
  if (group === 0 || serial === 0) return false;
  if (KNOWN_SAMPLES.has(digits)) return false;
  // 987-65-4320 .. 987-65-4329 are reserved for advertisements.
  if (digits.startsWith('98765432')) return false;
  if (/^(\d)\1{8}$/.test(digits)) return false;
  return true;
}
