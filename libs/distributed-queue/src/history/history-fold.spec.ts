import { InvalidArgumentError } from '../errors';
import type { HistoryEvent } from './history-event';
import { foldHistoryEvents } from './history-fold';

let seq = 0;
const ev = (event: HistoryEvent['event'], at: number, extra: Partial<HistoryEvent> = {}): HistoryEvent => ({
  event,
  type: 'mail',
  id: 'a',
  at,
  entryId: `${at}-${seq++}`,
  ...extra,
});

describe('foldHistoryEvents', () => {
  it('folds a task life into the state of its last event', () => {
    const [p, ...rest] = foldHistoryEvents([
      ev('submitted', 100, { dueAt: 200, delayMs: 100, body: '{"x":1}', timeoutMs: 5000, key: 'k', partition: 3 }),
      ev('started', 200, { attempt: 1, machine: 'h/1' }),
      ev('retrying', 210, { attempt: 1, error: { name: 'Error', message: 'boom' } }),
      ev('started', 300, { attempt: 2, machine: 'h/2' }),
      ev('completed', 310, { attempt: 2 }),
    ]);
    expect(rest).toEqual([]);
    expect(p).toMatchObject({
      submitted: true,
      status: 'done',
      reentry: 2,
      delayMs: 100,
      ttrMs: 5000,
      body: '{"x":1}',
      key: 'k',
      partition: 3,
      lastError: '{"name":"Error","message":"boom"}',
      machine: 'h/2',
      createTime: 100,
      dueTime: 200,
      executionTime: 300,
      finishedTime: 310,
      updatedTime: 310,
    });
  });

  it('a submitted restarts the task: earlier events of the batch are forgotten', () => {
    const [p] = foldHistoryEvents([
      ev('submitted', 100, { body: '1' }),
      ev('dead', 150, { attempt: 3, error: { name: 'E', message: 'm' } }),
      ev('submitted', 400, { body: '2' }),
    ]);
    expect(p).toMatchObject({ submitted: true, status: 'waiting', reentry: 0, body: '2', lastError: null, createTime: 400 });
    expect(p.finishedTime).toBeNull();
  });

  it("keeps the last error's stack in lastError; an error without one is kept as before", () => {
    const [p] = foldHistoryEvents([ev('retrying', 100, { attempt: 1, error: { name: 'E', message: 'm', stack: 'E: m\n    at f' } })]);
    expect(JSON.parse(p.lastError!)).toEqual({ name: 'E', message: 'm', stack: 'E: m\n    at f' });
    const [q] = foldHistoryEvents([ev('retrying', 100, { attempt: 1, error: { name: 'E', message: 'm' } })]);
    expect(q.lastError).toBe('{"name":"E","message":"m"}');
  });

  it("keeps the latest event's log lines; an event without them leaves them; a submitted restarts them", () => {
    const [p] = foldHistoryEvents([
      ev('submitted', 100),
      ev('retrying', 200, { attempt: 1, logs: '0 1 1\n[1,150,"a"]', error: { name: 'E', message: 'm' } }),
      ev('started', 300, { attempt: 2 }),
      ev('completed', 400, { attempt: 2, logs: '0 2 1\n[1,150,"a"]\n[2,350,"b"]' }),
      ev('recovered', 500),
    ]);
    expect(p.logs).toBe('0 2 1\n[1,150,"a"]\n[2,350,"b"]');
    const [q] = foldHistoryEvents([ev('dead', 100, { attempt: 1, logs: '0 1 1\n[1,50,"x"]' }), ev('submitted', 200)]);
    expect(q.logs).toBeNull();
    expect(foldHistoryEvents([ev('completed', 100, { attempt: 1 })])[0].logs).toBeNull();
  });

  it('without a submitted, only what the events carry is known', () => {
    const [p] = foldHistoryEvents([ev('started', 500, { attempt: 4, machine: 'm' }), ev('recovered', 600)]);
    expect(p).toMatchObject({ submitted: false, status: 'waiting', reentry: 4, machine: 'm', createTime: 500 });
    expect(p.body).toBeNull();
    expect(p.finishedTime).toBeNull();
    expect(foldHistoryEvents([ev('cancelled', 700)])[0]).toMatchObject({ status: 'cancelled', finishedTime: 700 });
  });

  it('one patch per task, in the order tasks first appear', () => {
    const patches = foldHistoryEvents([ev('submitted', 1, { id: 'b' }), ev('submitted', 2), ev('started', 3, { id: 'b' })]);
    expect(patches.map((p) => [p.id, p.status])).toEqual([
      ['b', 'running'],
      ['a', 'waiting'],
    ]);
  });

  it.each([
    [{ event: 'exploded' }, /unknown event/],
    [{ id: '' }, /needs a type and an id/],
    [{ at: undefined }, /needs a time/],
    [{ at: 1.5 }, /at that is not an integer/],
    [{ attempt: '2' }, /attempt that is not an integer/],
    [{ machine: 7 }, /machine that is not a string/],
    [{ logs: ['x'] }, /logs that is not a string/],
    [{ error: { name: 'E' } }, /error without a name and a message/],
    [{ error: { name: 'E', message: 'm', stack: 7 } }, /error stack that is not a string/],
    [{ entryId: 'x-1' }, /bad entryId/],
  ])('rejects a malformed event %j', (bad, message) => {
    const events = [ev('submitted', 1), { ...ev('started', 2), ...bad } as HistoryEvent];
    expect(() => foldHistoryEvents(events)).toThrow(InvalidArgumentError);
    expect(() => foldHistoryEvents(events)).toThrow(message);
    expect(() => foldHistoryEvents(events)).toThrow(/event 1/);
  });
});
