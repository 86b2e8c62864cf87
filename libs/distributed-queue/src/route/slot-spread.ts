/** Redis Cluster's hash slots. */
export const SLOTS = 16384;

const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/** CRC16/XMODEM, the checksum Redis Cluster maps keys to slots with. */
export function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff];
  return crc;
}

/** The hash slot of a key: of its hash tag (`{...}`, when not empty) or of the whole key. */
export function hashSlot(key: string): number {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  return crc16(Buffer.from(hashed, 'utf8')) % SLOTS;
}

/** Digits of the base-3 spread used below: past 3^5 partitions, cells repeat (still in the right third). */
const MAX_DEPTH = 5;

/**
 * Where partition `p` should land in the slot space: the base-3 van der Corput sequence (p's base-3 digits
 * mirrored behind the point), so that any number of consecutive partitions covers the space evenly. Its
 * first digit is `p mod 3`: on the usual 3-master cluster (three equal slot ranges) partitions go round-robin
 * over the masters; 6 and 9 masters get an even share too. Returns the cell: its start and width (slots).
 */
function cellOf(p: number): { start: number; width: number } {
  let value = 0;
  let scale = 1;
  let depth = 0;
  for (let rest = p; depth < MAX_DEPTH && (rest > 0 || depth === 0); rest = Math.floor(rest / 3)) {
    scale /= 3;
    value += (rest % 3) * scale;
    depth++;
  }
  return { start: value * SLOTS, width: scale * SLOTS };
}

/** Tries before settling for the nearest slot seen (the middle half of a cell is hit in ~2·3^depth tries). */
const MAX_TRIES = 20_000;

/**
 * The suffix `s` that puts the hash tag `<base>:<s>` in the middle half of partition `p`'s cell (see
 * `cellOf`): the first such `s`, so every process finds the same one. Depends on `p` only, never on the
 * partition count: growing a queue renames nothing.
 */
export function spreadSuffix(base: string, p: number): number {
  const { start, width } = cellOf(p);
  const middle = start + width / 2;
  let best = 0;
  let bestDistance = Infinity;
  for (let s = 0; s < MAX_TRIES; s++) {
    const distance = Math.abs(crc16(Buffer.from(`${base}:${s}`, 'utf8')) % SLOTS - middle);
    if (distance <= width / 4) return s;
    if (distance < bestDistance) [best, bestDistance] = [s, distance];
  }
  return best;
}
