import { PartitionFullError } from '../errors';
import type { PushOutcome } from '../redis/script-outcome';
import { RouteProducer } from './route-producer';
import type { RouteStore } from './route.store';

/** A route queue of 4 partitions of at most 10 waiting tasks whose push answers `outcome`; records the calls. */
function producerAnswering(outcome: PushOutcome) {
  const calls: { partition: number; items: string[]; requestId: string; entering: boolean; ttlMs?: number }[] = [];
  const store = {
    options: { qId: 'q', partitions: 4, maxPartitionSize: 10 },
    partitionCount: () => Promise.resolve(4),
    push: (partition: number, _n: number, items: string[], requestId: string, entering: boolean, ttlMs?: number) => {
      calls.push({ partition, items, requestId, entering, ttlMs });
      return Promise.resolve(items.map(() => ({ outcome })));
    },
  };
  return { producer: new RouteProducer(store as unknown as RouteStore, { warn: () => undefined }), calls };
}

const move = { requestId: 'move-1', ttlMs: 90_000 };

describe('RouteProducer.enter: a due delayed ordered task enters its partition', () => {
  it('as the move it is named after, and answers where it went', async () => {
    const { producer, calls } = producerAnswering('queued');
    const written: number[] = [];
    expect(await producer.enter({ key: 'a', id: 't1', item: '{}' }, move, (p) => written.push(p))).toEqual({ id: 't1', partition: 0, outcome: 'queued' });
    expect(calls).toEqual([{ partition: 0, items: ['{}'], requestId: 'move-1', entering: true, ttlMs: 90_000 }]);
    expect(written).toEqual([0]);
  });

  it.each(['rejected', 'discarded'] as const)('throws PartitionFullError (partition, limit) when its full partition did not take it (%s)', async (outcome) => {
    const { producer } = producerAnswering(outcome);
    const error = await producer.enter({ key: 'a', id: 't1', item: '{}' }, move).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PartitionFullError);
    expect(error).toMatchObject({ partition: 0, limit: 10, message: 'Route queue partition 0 is full (10 waiting tasks)' });
  });
});
