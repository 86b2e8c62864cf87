import type { Cluster, ClusterOptions } from 'ioredis';
import { followMovedThroughNatMap } from './cluster-redirects';

/** A stand-in for a cluster client: its options and the error handler ioredis calls on an error reply. */
function fakeCluster(natMap?: ClusterOptions['natMap']) {
  const seen: string[] = [];
  const original = (error: Error) => seen.push(error.message);
  const client = { options: { natMap }, handleError: original } as unknown as Cluster;
  followMovedThroughNatMap(client);
  const reply = (message: string): string => {
    client.handleError(new Error(message), {}, {});
    return seen[seen.length - 1];
  };
  return { client, original, reply };
}

describe('followMovedThroughNatMap', () => {
  const natMap = { '10.0.0.1:7000': { host: '127.0.0.1', port: 30001 } };

  it("maps a MOVED reply's address through the natMap before ioredis reads it", () => {
    const { reply } = fakeCluster(natMap);
    expect(reply('MOVED 1564 10.0.0.1:7000')).toBe('MOVED 1564 127.0.0.1:30001');
  });

  it('leaves unmapped addresses, ASK and other errors as they are', () => {
    const { reply } = fakeCluster(natMap);
    expect(reply('MOVED 1564 10.0.0.9:7000')).toBe('MOVED 1564 10.0.0.9:7000');
    expect(reply('ASK 1564 10.0.0.1:7000')).toBe('ASK 1564 10.0.0.1:7000');
    expect(reply('Connection is closed.')).toBe('Connection is closed.');
  });

  it('maps through a natMap function, unless it would map the mapped address again elsewhere', () => {
    const idempotent = fakeCluster((key) => ({ host: 'public', port: Number(key.split(':')[1]) }));
    expect(idempotent.reply('MOVED 1 10.0.0.1:7000')).toBe('MOVED 1 public:7000');
    const shifting = fakeCluster((key) => ({ host: 'public', port: Number(key.split(':')[1]) + 1 }));
    expect(shifting.reply('MOVED 1 10.0.0.1:7000')).toBe('MOVED 1 10.0.0.1:7000');
  });

  it('keeps the handler of a cluster without a natMap', () => {
    const { client, original } = fakeCluster(undefined);
    expect(client.handleError).toBe(original);
  });
});
