/**
 * The Redis Cluster slot of a key (CRC16/XMODEM of its hash tag, mod 16384),
 * as the cluster computes it: the text between the first `{` and the next
 * `}` when that is not empty, else the whole key.
 */
export function keySlot(key: string): number {
  const bytes = Buffer.from(key);
  const open = bytes.indexOf(0x7b);
  let start = 0;
  let end = bytes.length;
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) {
      start = open + 1;
      end = close;
    }
  }
  let crc = 0;
  for (let i = start; i < end; i++) {
    crc ^= (bytes[i] as number) << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}
