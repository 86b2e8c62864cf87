import type { TaskEvent } from '../interfaces/task-event.interface';
import { ANY_TYPE_WITH_INTERNAL, TaskEventBus } from './task-event-bus';

const event = (type: string): TaskEvent => ({ event: 'completed', scope: 'local', task: { id: 'a', type, payload: null, attempt: 1, dueAt: 0 }, at: 0 });
const flushed = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("TaskEventBus and the library's own types", () => {
  it("'*' hears the user's types only; a listener naming an internal type, or ANY_TYPE_WITH_INTERNAL, hears it", async () => {
    const bus = new TaskEventBus();
    const heard: Record<string, string[]> = { any: [], named: [], every: [] };
    bus.on('local', '*', ['completed'], (e) => void heard.any.push(e.task.type));
    bus.on('local', '__cron__.sweep', ['completed'], (e) => void heard.named.push(e.task.type));
    bus.on('local', ANY_TYPE_WITH_INTERNAL, ['completed'], (e) => void heard.every.push(e.task.type));
    for (const type of ['order.close', '__cron__.sweep', '__cron__', '__route__.q']) bus.emit(event(type));
    await flushed();
    expect(heard).toEqual({
      any: ['order.close'],
      named: ['__cron__.sweep'],
      every: ['order.close', '__cron__.sweep', '__cron__', '__route__.q'],
    });
  });

  it("wants an internal type's event only when a listener asks for it", () => {
    const bus = new TaskEventBus();
    bus.on('local', '*', ['completed'], () => undefined);
    expect(bus.wants('local', 'order.close', 'completed')).toBe(true);
    expect(bus.wants('local', '__cron__.sweep', 'completed')).toBe(false);
    bus.on('fleet', ANY_TYPE_WITH_INTERNAL, ['completed'], () => undefined);
    expect(bus.wants('fleet', '__cron__.sweep', 'completed')).toBe(true);
    expect(bus.fleetTypes()).toEqual([]);
  });

  it('reports handler runs to their listeners until removed', () => {
    const bus = new TaskEventBus();
    const runs: boolean[] = [];
    const off = bus.onHandlerRun((run) => void runs.push(run.ok));
    bus.handlerRan({ type: 't', ok: true, dueAt: 1, startedAt: 2, durationMs: 3 });
    off();
    bus.handlerRan({ type: 't', ok: false, dueAt: 1, startedAt: 2, durationMs: 3 });
    expect(runs).toEqual([true]);
  });
});
