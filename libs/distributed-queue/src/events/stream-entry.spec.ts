import { decodeStreamEntry } from './stream-entry';

describe('decodeStreamEntry', () => {
  it('reads a submit batch: ids, due times, delays and bodies', () => {
    const entry: [string, string[]] = ['1000-0', ['e', 'submitted', 'ids', '["a","b"]', 'due', '[1000,6000]', 'd', '[0,5000]', 'b', '["{\\"x\\":1}","2"]']];
    expect(decodeStreamEntry(entry, { type: 'mail' })).toEqual([
      { event: 'submitted', type: 'mail', id: 'a', at: 1000, entryId: '1000-0', dueAt: 1000, delayMs: 0, body: '{"x":1}' },
      { event: 'submitted', type: 'mail', id: 'b', at: 1000, entryId: '1000-0', dueAt: 6000, delayMs: 5000, body: '2' },
    ]);
  });

  it('reads starts with their holder, failures with their error, route entries with type, key and partition', () => {
    const started = decodeStreamEntry(['5-1', ['e', 'started', 'ids', '["a"]', 'a', '[2]', 'm', 'host/42']], { type: 't' });
    expect(started).toEqual([{ event: 'started', type: 't', id: 'a', at: 5, entryId: '5-1', attempt: 2, machine: 'host/42' }]);
    const [dead] = decodeStreamEntry(['7-0', ['e', 'dead', 'ids', '["i"]', 't', '["acct"]', 'k', '["k1"]', 'a', '[3]', 'err', '[{"name":"E","message":"m"}]']], { partition: 4 });
    expect(dead).toEqual({ event: 'dead', type: 'acct', id: 'i', at: 7, entryId: '7-0', attempt: 3, key: 'k1', partition: 4, error: { name: 'E', message: 'm' } });
  });

  it('ignores what it cannot read', () => {
    expect(decodeStreamEntry(['1-0', ['e', 'exploded', 'ids', '["a"]']], { type: 't' })).toEqual([]);
    expect(decodeStreamEntry(['1-0', ['e', 'completed', 'ids', '{']], { type: 't' })).toEqual([]);
  });
});
