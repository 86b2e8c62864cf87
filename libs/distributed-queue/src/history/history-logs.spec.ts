import type { StreamEntry } from '../events/stream-entry';
import { decodeEntries } from './history-decode';
import { attachTaskLogs, loggedTaskIds, taskLogsKey, type LogsReader } from './history-logs';

const entry = (id: string, e: string, ...ids: string[]): StreamEntry => [id, ['e', e, 'ids', JSON.stringify(ids), 'a', JSON.stringify(ids.map(() => 1))]];
const decode = (...entries: StreamEntry[]) => decodeEntries(entries, { type: 'mail' });

/** A HASH in memory that records its HMGETs. */
function fakeRedis(hash: Record<string, string>, fail?: Error): LogsReader & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    calls,
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
    const entries = decode(
      entry('1-0', 'submitted', 's'),
      entry('2-0', 'started', 'a'),
      entry('3-0', 'retrying', 'a', 'b'),
      entry('4-0', 'completed', 'a'),
      entry('5-0', 'dead', 'c'),
      entry('6-0', 'cancelled', 'd'),
      entry('7-0', 'recovered', 'e'),
    );
    expect(loggedTaskIds(entries)).toEqual(['a', 'b', 'c']);
  });

  it('reads nothing when the batch ends no attempt', async () => {
    const redis = fakeRedis({ a: '0\n[1,1,"x"]' });
    expect(await attachTaskLogs(redis, 'k', decode(entry('1-0', 'submitted', 'a'), entry('2-0', 'started', 'a')))).toBe(0);
    expect(await attachTaskLogs(redis, 'k', [])).toBe(0);
    expect(redis.calls).toEqual([]);
  });

  it('one HMGET per chunk of ids; the attempt ends get their task’s lines, other events and tasks without lines none', async () => {
    const redis = fakeRedis({ a: '0\n[1,1,"x"]\n[2,2,"y"]', c: '4\n[1,3,"z"]', d: '' });
    const entries = decode(entry('1-0', 'started', 'a'), entry('2-0', 'retrying', 'a', 'b'), entry('3-0', 'completed', 'a'), entry('4-0', 'dead', 'c', 'd'));
    expect(await attachTaskLogs(redis, 'k', entries, 2)).toBe(2);
    expect(redis.calls).toEqual([
      ['k', 'a', 'b'],
      ['k', 'c', 'd'],
    ]);
    const logs = entries.flatMap((x) => x.events.map((e) => `${e.event}:${e.id}:${e.logs ?? '-'}`));
    expect(logs).toEqual([
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
    expect(await attachTaskLogs(redis, 'k', decode(entry('1-0', 'completed', ...ids)))).toBe(3);
    expect(redis.calls.map((c) => c.length - 1)).toEqual([100, 100, 50]);
  });

  it('a failed read rejects, and no event is changed', async () => {
    const entries = decode(entry('1-0', 'completed', 'a'));
    await expect(attachTaskLogs(fakeRedis({ a: '0\n[1,1,"x"]' }, new Error('down')), 'k', entries)).rejects.toThrow('down');
    expect(entries[0].events[0].logs).toBeUndefined();
  });
});
