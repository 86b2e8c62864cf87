import { UnkeptTask } from './active-task';
import type { Task } from '../interfaces';
import { callHandler, runController, takesSignal } from './handler-call';

const task = new UnkeptTask('a', 't', 1, 1, 0);

describe('takesSignal', () => {
  it('is false only for a handler that declares no signal and cannot reach one another way', () => {
    class TaskOnly {
      handle(t: Task) {
        return t.id;
      }
    }
    class WithSignal {
      handle(_t: Task, signal: AbortSignal) {
        return signal.aborted;
      }
    }
    class Rest {
      handle(...args: unknown[]) {
        return args.length;
      }
    }
    class TaskAndRest {
      handle(t: Task, ...rest: unknown[]) {
        return [t, rest];
      }
    }
    class ReadsArguments {
      handle(t: Task) {
        // eslint-disable-next-line prefer-rest-params
        return [t, arguments[1]];
      }
    }
    expect(takesSignal(new TaskOnly())).toBe(false);
    expect(takesSignal({ handle: () => undefined })).toBe(false);
    expect(takesSignal({ handle: (t: Task) => t })).toBe(false);
    expect(takesSignal(new WithSignal())).toBe(true);
    expect(takesSignal(new Rest())).toBe(true);
    expect(takesSignal(new TaskAndRest())).toBe(true);
    expect(takesSignal(new ReadsArguments())).toBe(true);
    // A bound function's source cannot be read: it may forward the signal.
    const inner = new WithSignal();
    expect(takesSignal({ handle: inner.handle.bind(inner) as (t: Task) => unknown })).toBe(true);
  });

  it('gives a handler that reads its signal a controller of its own per run', () => {
    const seen: AbortSignal[] = [];
    const handler = { handle: (_t: Task, signal: AbortSignal) => void seen.push(signal) };
    const [a, b] = [runController(handler), runController(handler)];
    callHandler(handler, task, a, () => undefined);
    callHandler(handler, task, b, () => undefined);
    a!.abort(new Error('stop'));
    expect(seen.map((s) => s.aborted)).toEqual([true, false]);
    expect(runController({ handle: (t: Task) => t })).toBeUndefined();
  });
});
