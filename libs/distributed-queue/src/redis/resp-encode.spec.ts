import { Command } from 'ioredis';
import { encodeCommand } from './resp-encode';

/** What ioredis writes for the same command. */
function ioredisBytes(name: string, args: (string | Buffer)[]): Buffer {
  const written = new Command(name, args).toWritable({});
  return Buffer.isBuffer(written) ? written : Buffer.from(written);
}

describe('encodeCommand', () => {
  it.each<[string, (string | Buffer)[]]>([
    ['ping', []],
    ['evalsha', ['a'.repeat(40), '2', '{p:q}:waiting', '{p:q}:jobs', '0', '1000', '']],
    ['eval', ['return 1', '0']],
    ['set', ['ключ', 'значение ✓ 🎉']],
    ['set', ['k', Buffer.from([0, 1, 2, 255])]],
    ['rpush', ['k', ...Array.from({ length: 130 }, (_, i) => 'x'.repeat(i * 7))]],
  ])('writes %s exactly as ioredis does', (name, args) => {
    expect(encodeCommand(name, args).equals(ioredisBytes(name, args))).toBe(true);
  });

  it('counts digits right at powers of ten', () => {
    for (const n of [9, 10, 99, 100, 999, 1000, 9999, 10000, 99999, 100000]) {
      const args = ['v'.repeat(n)];
      expect(encodeCommand('set', args).equals(ioredisBytes('set', args))).toBe(true);
    }
  });
});
