import type { StreamEntry } from '../events/stream-entry';
import { decodeEntries } from './history-decode';
import { attachTaskLogs, loggedTaskIds, readBatchLogs, readTaskLogs, taskLogsKey, type LogsReader } from './history-logs';

const entry = (id: string, e: string, ...ids: string[]): StreamEntry => [id, ['e', e, 'ids', JSON.stringify(ids), 'a', JSON.stringify(ids.map(() => 1))]];
const decode = (...entries: StreamEntry[]) => decodeEntries(entries, { type: 'mail' }).flatMap((x) => x.events);
const held = (e: string, ...ids: string[]) => ({ event: e, ids });

/** A HASH in memory that records its HMGETs. */
function fakeRedis(hash: Record<string, string>, fail?: Error): LogsReader & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    calls,
    hlen: async () => Object.keys(hash).length,
    hmget: async (key: string, ...ids: string[]) => {
      calls.push([key, ...ids]);
      if (fail) throw fail;
      return ids.map((id) => hash[id] ?? null);
    },
  };
}

describe('task logs in the history', () => {
  it('the log key is beside the type’s jobs hash', () => {
    expect(taskLogsKey('dq', 'mail')).toBe('dq:{dq:mail}:jobs:lg');
  });

  it('takes the ids of attempt ends only (completed, retrying, dead), each once', () => {
    const entries = [
      held('submitted', 's'),
      held('started', 'a'),
      held('retrying', 'a', 'b'),
      held('completed', 'a'),
      held('dead', 'c'),
      held('cancelled', 'd'),
      held('recovered', 'e'),
    ];
    expect(loggedTaskIds(entries)).toEqual(['a', 'b', 'c']);
  });

  it('reads nothing for no ids', async () => {
    const redis = fakeRedis({ a: '0\n[1,1,"x"]' });
    expect((await readTaskLogs(redis, 'k', [])).size).toBe(0);
    expect(redis.calls).toEqual([]);
  });

  it('one HMGET per chunk of ids; the attempt ends get their task’s lines, other events and tasks without lines none', async () => {
    const redis = fakeRedis({ a: '0\n[1,1,"x"]\n[2,2,"y"]', c: '4\n[1,3,"z"]', d: '' });
    const logs = await readTaskLogs(redis, 'k', ['a', 'b', 'c', 'd'], 2);
    expect(redis.calls).toEqual([
      ['k', 'a', 'b'],
      ['k', 'c', 'd'],
    ]);
    const events = decode(entry('1-0', 'started', 'a'), entry('2-0', 'retrying', 'a', 'b'), entry('3-0', 'completed', 'a'), entry('4-0', 'dead', 'c', 'd'));
    attachTaskLogs(events, logs);
    expect(events.map((e) => `${e.event}:${e.id}:${e.logs ?? '-'}`)).toEqual([
      'started:a:-',
      'retrying:a:0\n[1,1,"x"]\n[2,2,"y"]',
      'retrying:b:-',
      'completed:a:0\n[1,1,"x"]\n[2,2,"y"]',
      'dead:c:4\n[1,3,"z"]',
      'dead:d:-',
    ]);
  });

  it('chunks of at most 100 ids by default', async () => {
    const ids = Array.from({ length: 250 }, (_, i) => `t${i}`);
    const redis = fakeRedis({});
    await readTaskLogs(redis, 'k', ids);
    expect(redis.calls.map((c) => c.length - 1)).toEqual([100, 100, 50]);
  });

  it('a batch reads nothing but the length when the type keeps no lines', async () => {
    const empty = fakeRedis({});
    expect((await readBatchLogs(empty, 'k', [held('completed', 'a', 'b')])).size).toBe(0);
    expect(empty.calls).toEqual([]);
    const some = fakeRedis({ b: '0\n[1,1,"x"]' });
    expect([...(await readBatchLogs(some, 'k', [held('started', 'a'), held('completed', 'a', 'b')]))]).toEqual([['b', '0\n[1,1,"x"]']]);
    expect(some.calls).toEqual([['k', 'a', 'b']]);
  });

  it('a failed read rejects', async () => {
    await expect(readTaskLogs(fakeRedis({ a: '0\n[1,1,"x"]' }, new Error('down')), 'k', ['a'])).rejects.toThrow('down');
  });
});
