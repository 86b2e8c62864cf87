import { decodeStreamEntry } from './stream-entry';

describe('decodeStreamEntry', () => {
  it('reads a submit batch: ids, due times, delays and bodies', () => {
    const entry: [string, string[]] = ['1000-0', ['e', 'submitted', 'ids', '["a","b"]', 'due', '[1000,6000]', 'd', '[0,5000]', 'b', '["{\\"x\\":1}","2"]']];
    expect(decodeStreamEntry(entry, { type: 'mail' })).toEqual([
      { event: 'submitted', type: 'mail', id: 'a', at: 1000, entryId: '1000-0', dueAt: 1000, delayMs: 0, body: '{"x":1}' },
      { event: 'submitted', type: 'mail', id: 'b', at: 1000, entryId: '1000-0', dueAt: 6000, delayMs: 5000, body: '2' },
    ]);
  });

  it("dates a submit by the script's clock (due − delay), not by the entry id, which XADD may stamp 1 ms later", () => {
    const entry: [string, string[]] = ['1001-0', ['e', 'submitted', 'ids', '["a"]', 'due', '[2500]', 'd', '[1500]']];
    const [submitted] = decodeStreamEntry(entry, { type: 'mail' });
    expect(submitted.at).toBe(1000);
    expect(submitted.dueAt).toBe(submitted.at + submitted.delayMs!);
  });

  it('reads starts with their holder, failures with their error, route entries with type, key and partition', () => {
    const started = decodeStreamEntry(['5-1', ['e', 'started', 'ids', '["a"]', 'a', '[2]', 'm', 'host/42']], { type: 't' });
    expect(started).toEqual([{ event: 'started', type: 't', id: 'a', at: 5, entryId: '5-1', attempt: 2, machine: 'host/42' }]);
    const [dead] = decodeStreamEntry(['7-0', ['e', 'dead', 'ids', '["i"]', 't', '["acct"]', 'k', '["k1"]', 'a', '[3]', 'err', '[{"name":"E","message":"m"}]']], { partition: 4 });
    expect(dead).toEqual({ event: 'dead', type: 'acct', id: 'i', at: 7, entryId: '7-0', attempt: 3, key: 'k1', partition: 4, error: { name: 'E', message: 'm' } });
  });

  it("reads a failure's stack; an entry without one (written before stacks were kept) reads as before", () => {
    const [withStack] = decodeStreamEntry(['8-0', ['e', 'dead', 'ids', '["i","j"]', 'a', '[1,1]', 'err', '[{"name":"E","message":"m","stack":"E: m\\n    at f"},{"name":"E","message":"n"}]']], { type: 't' }).map((e) => e.error);
    expect(withStack).toEqual({ name: 'E', message: 'm', stack: 'E: m\n    at f' });
    const [, without] = decodeStreamEntry(['8-0', ['e', 'dead', 'ids', '["i","j"]', 'a', '[1,1]', 'err', '[{"name":"E","message":"m","stack":7},{"name":"E","message":"n"}]']], { type: 't' }).map((e) => e.error);
    expect(without).toEqual({ name: 'E', message: 'n' });
    expect(decodeStreamEntry(['8-0', ['e', 'dead', 'ids', '["i"]', 'err', '[{"name":"E","message":"m","stack":7}]']], { type: 't' })[0].error).toEqual({ name: 'E', message: 'm' });
  });

  it('ignores what it cannot read', () => {
    expect(decodeStreamEntry(['1-0', ['e', 'exploded', 'ids', '["a"]']], { type: 't' })).toEqual([]);
    expect(decodeStreamEntry(['1-0', ['e', 'completed', 'ids', '{']], { type: 't' })).toEqual([]);
  });
});
