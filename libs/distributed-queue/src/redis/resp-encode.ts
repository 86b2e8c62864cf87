/** Byte lengths of the current command's arguments, reused from call to call (grown as needed). */
let lengths = new Int32Array(64);

const CRLF = 0x0d0a;

/** Writes `n` (a non-negative integer) in decimal at `at`; returns the offset after it. */
function writeDigits(buf: Buffer, at: number, n: number): number {
  const digits = digitCount(n);
  for (let i = at + digits - 1; i >= at; i--) {
    buf[i] = 48 + (n % 10);
    n = Math.floor(n / 10);
  }
  return at + digits;
}

/** Decimal digits of `n` (a non-negative integer). */
function digitCount(n: number): number {
  let digits = 1;
  for (let power = 10; n >= power; power *= 10) digits++;
  return digits;
}

/**
 * A command in the Redis protocol (RESP2 multi-bulk), written into one buffer: the bytes ioredis's
 * `Command.toWritable` produces, without its string per piece (four or five per argument, then one more to
 * flatten them for the socket).
 */
export function encodeCommand(name: string, args: readonly (string | Buffer)[]): Buffer {
  if (lengths.length < args.length) lengths = new Int32Array(args.length * 2);
  const nameLength = Buffer.byteLength(name);
  let size = 1 + digitCount(args.length + 1) + 2 + 1 + digitCount(nameLength) + 2 + nameLength + 2;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const length = typeof arg === 'string' ? Buffer.byteLength(arg) : arg.length;
    lengths[i] = length;
    size += 1 + digitCount(length) + 2 + length + 2;
  }
  const buf = Buffer.allocUnsafe(size);
  buf[0] = 0x2a; // '*'
  let at = writeDigits(buf, 1, args.length + 1);
  at = buf.writeUInt16BE(CRLF, at);
  buf[at++] = 0x24; // '$'
  at = writeDigits(buf, at, nameLength);
  at = buf.writeUInt16BE(CRLF, at);
  at += buf.write(name, at);
  at = buf.writeUInt16BE(CRLF, at);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    buf[at++] = 0x24; // '$'
    at = writeDigits(buf, at, lengths[i]);
    at = buf.writeUInt16BE(CRLF, at);
    at += typeof arg === 'string' ? buf.write(arg, at) : arg.copy(buf, at);
    at = buf.writeUInt16BE(CRLF, at);
  }
  return buf;
}
