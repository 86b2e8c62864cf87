import { Command } from 'ioredis';
import { scriptArgs, slotGuardKey } from './lua-script';

type Arg = string | number | Buffer;

/** What ioredis's own Command makes of a script call's arguments (flattened, keys prefixed, numbers as strings). */
function ioredisArgs(sha: string, keys: Arg[], rest: Arg[], keyPrefix?: string): unknown[] {
  return new Command('evalsha', [sha, keys.length, ...keys, ...rest], { keyPrefix }).args;
}

describe('scriptArgs', () => {
  const sha = 'a'.repeat(40);
  const cases: [string, Arg[], Arg[], string | undefined][] = [
    ['no prefix', ['k1', 'k2'], ['v', 3, 4.5], undefined],
    ['a prefix', ['k1', '{t}:k2'], ['v', 0, -1], 'app:'],
    ['a Buffer key and argument', [Buffer.from('kb'), 'k2'], [Buffer.from([0, 1, 2]), 'x'], 'p:'],
    ['no keys', [], ['only', 7], 'p:'],
    ['no arguments', ['k'], [], 'p:'],
  ];

  it.each(cases)('as ioredis makes them: %s', (_label, keys, rest, prefix) => {
    expect(scriptArgs(sha, keys.length, [...keys, ...rest], false, prefix)).toEqual(ioredisArgs(sha, keys, rest, prefix));
  });

  it('fewer arguments than keys: sent as given, for Redis to refuse (no key invented)', () => {
    expect(scriptArgs(sha, 3, ['k1'], false, 'p:')).toEqual([sha, '3', 'p:k1']);
    expect(scriptArgs(sha, 3, [], false, 'p:')).toEqual([sha, '3']);
  });

  it('with the slot guard: declared last among the keys, in the first key\'s slot, prefixed', () => {
    const keys = ['{t}:a', '{t}:b'];
    expect(scriptArgs(sha, 2, [...keys, 'v', 1], true, 'p:')).toEqual(ioredisArgs(sha, [...keys, slotGuardKey(keys[0])], ['v', 1], 'p:'));
    expect(scriptArgs(sha, 2, [...keys, 'v'], true)[4]).toBe('{t}:a:slot-guard');
  });
});
