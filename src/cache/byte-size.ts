const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** A byte count as a size with a unit: `0B`, `512B`, `1.50KiB`, `12.3MiB`. */
export function formatBytes(bytes: number): string {
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${Math.round(value)}B`;
  return `${value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0)}${UNITS[unit]}`;
}
