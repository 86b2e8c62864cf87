import type { TaskEvent } from '../interfaces/task-event.interface';
import type { TaskEventBus } from '../events/task-event-bus';
import { PartitionAcks } from './partition-acks';
import type { RouteStore } from './route.store';
import type { RouteAckOutcome as Outcome } from '../redis/script-outcome';

/** A store whose ack answers `reply` or rejects. */
function store(reply: () => Promise<Outcome>) {
  const calls: { acks: number[]; dead: [number, string][] }[] = [];
  const fake = {
    ack: (_p: number, _me: string, _epoch: number, acks: number[], dead: [number, string][]) => {
      calls.push({ acks, dead });
      return reply();
    },
  };
  return { store: fake as unknown as RouteStore, calls };
}

function bus() {
  const emitted: TaskEvent[] = [];
  return { bus: { emit: (e: TaskEvent) => emitted.push(e) } as unknown as TaskEventBus, emitted };
}

const event = (name: 'completed' | 'dead', id: string): TaskEvent => ({
  event: name, scope: 'local', task: { id, type: 't', payload: {}, attempt: 1, dueAt: 0 }, at: 0,
});

describe('PartitionAcks: the completed and dead events of ordered tasks come after their ack is in Redis', () => {
  // NOTE: the ACK_DELAY_MS timer would send on its own: the tests send when they say.
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  it('emits nothing when added; after the ack reply, each event once', async () => {
    const { store: s, calls } = store(() => Promise.resolve('ok'));
    const { bus: b, emitted } = bus();
    const acks = new PartitionAcks(s, 0, 'm', 1, () => undefined, b);
    acks.add({ seq: 1, event: event('completed', 'a') });
    acks.add({ seq: 2, error: '{"name":"Error","message":"no"}', event: event('dead', 'b') });
    acks.add({ seq: 3 });
    expect(emitted).toEqual([]);
    await acks.flush();
    acks.close();
    expect(calls).toEqual([{ acks: [1, 3], dead: [[2, '{"name":"Error","message":"no"}']] }]);
    expect(emitted.map((e) => `${e.event}:${e.task.id}`)).toEqual(['completed:a', 'dead:b']);
    expect(emitted[0].at).toBeGreaterThan(0);
  });

  it('a fenced ack (the partition moved on) announces nothing; a failed one announces with the retry that lands', async () => {
    let answer: () => Promise<Outcome> = () => Promise.resolve('fenced');
    const { store: s } = store(() => answer());
    const { bus: b, emitted } = bus();
    let fenced = 0;
    const acks = new PartitionAcks(s, 0, 'm', 1, () => fenced++, b);
    acks.add({ seq: 1, event: event('completed', 'a') });
    await acks.flush();
    expect([fenced, emitted.length]).toEqual([1, 0]);

    answer = () => Promise.reject(new Error('connection lost'));
    acks.add({ seq: 2, event: event('completed', 'b') });
    await expect(acks.flush()).rejects.toThrow('connection lost');
    expect(emitted).toEqual([]);
    answer = () => Promise.resolve('ok');
    await acks.flush();
    acks.close();
    expect(emitted.map((e) => e.task.id)).toEqual(['b']);
  });

  it('an ack that found some of its tasks not in flight (a failover lost their take) announces none of them', async () => {
    let answer: Outcome = 'partial';
    const { store: s } = store(() => Promise.resolve(answer));
    const { bus: b, emitted } = bus();
    const partial: string[] = [];
    const acks = new PartitionAcks(s, 0, 'm', 1, () => undefined, b, undefined, { debug: (m: string) => partial.push(m) });
    acks.add({ seq: 1, event: event('completed', 'a') });
    acks.add({ seq: 2, error: '{"name":"Error","message":"no"}', event: event('dead', 'b') });
    await acks.flush();
    expect([partial, emitted]).toEqual([[expect.stringMatching(/^\[route p0\] an ack of 2 task\(s\) found some not in flight/)], []]);
    answer = 'ok';
    acks.add({ seq: 3, event: event('completed', 'c') });
    await acks.flush();
    acks.close();
    expect(emitted.map((e) => e.task.id)).toEqual(['c']);
  });
});
