import type { TaskEvent } from '../interfaces/task-event.interface';
import type { TaskEventBus } from '../events/task-event-bus';
import { ConsumerEvents } from './consumer-events';
import { DelayAcks } from './delay-acks';
import type { RunningTask } from './running-task';

/** A bus that records what it is given; `listening` says whether anything listens. */
function bus(listening = true) {
  const emitted: TaskEvent[] = [];
  const fake = { wants: () => listening, emit: (e: TaskEvent) => emitted.push(e) };
  return { bus: fake as unknown as TaskEventBus, emitted };
}

const task = (id: string): RunningTask => ({
  reservation: { id, attempt: 1, token: `tok-${id}`, dueAt: 0, payload: '{}' },
  batch: { tasks: new Set() },
  settled: true,
  startedAt: Date.now() - 5,
});

describe('DelayAcks: a completion is announced only once Redis has its ack', () => {
  it('emits nothing when pushed; after the reply, every completion but the refused ones, in order', () => {
    const { bus: b, emitted } = bus();
    const acks = new DelayAcks(new ConsumerEvents('t', b));
    acks.push(task('a'), 1);
    acks.push(task('b'), 2);
    acks.push(task('c'), 3);
    expect(emitted).toEqual([]);
    const batch = acks.drain();
    // Each ack's token carries its task's result after a newline (see results.lua).
    expect(batch.held).toEqual([['a', 'tok-a\n1'], ['b', 'tok-b\n2'], ['c', 'tok-c\n3']]);
    expect(acks.size).toBe(0);
    acks.sent(batch, ['b']);
    expect(emitted.map((e) => [e.event, e.task.id, e.result])).toEqual([['completed', 'a', 1], ['completed', 'c', 3]]);
    expect(emitted[0].durationMs).toBeGreaterThanOrEqual(0);
  });

  it("carries a result as JSON, a too large or non-JSON one as '!<bytes>' / '!-1', and none for undefined", () => {
    const { bus: b } = bus();
    const acks = new DelayAcks(new ConsumerEvents('t', b), 20);
    acks.push(task('a'), { ok: true });
    acks.push(task('b'), 'x'.repeat(30));
    acks.push(task('c'), 10n);
    acks.push(task('d'), undefined);
    acks.push(task('e'), null);
    expect(acks.drain().held).toEqual([['a', 'tok-a\n{"ok":true}'], ['b', 'tok-b\n!32'], ['c', 'tok-c\n!-1'], ['d', 'tok-d'], ['e', 'tok-e\nnull']]);
  });

  it('a failed call puts acks and completions back ahead of newer ones: announced with the call that lands', () => {
    const { bus: b, emitted } = bus();
    const acks = new DelayAcks(new ConsumerEvents('t', b));
    acks.push(task('a'), undefined);
    const failed = acks.drain();
    acks.push(task('b'), undefined);
    acks.restore(failed);
    expect(emitted).toEqual([]);
    const batch = acks.drain();
    expect(batch.held.map(([id]) => id)).toEqual(['a', 'b']);
    acks.sent(batch, []);
    expect(emitted.map((e) => e.task.id)).toEqual(['a', 'b']);
  });

  it('keeps no completion while nothing listens (acks only)', () => {
    const { bus: b, emitted } = bus(false);
    const acks = new DelayAcks(new ConsumerEvents('t', b));
    acks.push(task('a'), undefined);
    const batch = acks.drain();
    expect(batch).toEqual({ held: [['a', 'tok-a']], completions: [] });
    acks.sent(batch, []);
    expect(emitted).toEqual([]);
  });
});

describe('ConsumerEvents.outcome: a failed attempt is announced with what Redis recorded', () => {
  it('failed then its outcome; only failed for a stale reservation or a call that failed (Redis recorded no outcome)', () => {
    const { bus: b, emitted } = bus();
    const events = new ConsumerEvents('t', b);
    const error = new Error('no');
    events.outcome(task('a'), 'retried', error, Date.now());
    events.outcome(task('b'), 'dropped', error, Date.now());
    events.outcome(task('c'), 'stale', error, Date.now());
    events.outcome(task('d'), undefined, error, Date.now());
    events.outcome(task('e'), 'dead', error, Date.now());
    expect(emitted.map((e) => `${e.event}:${e.task.id}`)).toEqual(['failed:a', 'retrying:a', 'failed:b', 'cancelled:b', 'failed:c', 'failed:d', 'failed:e', 'dead:e']);
  });
});
