import type { ActiveTask, TaskHandler } from '../interfaces';

/** What a handler that cannot see its signal is passed: a signal that never aborts. */
const NEVER_ABORTS = new AbortController().signal;
/** Source that may reach a second argument without declaring it, or that cannot be read. */
const MAY_REACH_ARGUMENTS = /\.\.\.|\barguments\b|\[native code\]/;
const signalUse = new WeakMap<object, boolean>();

/**
 * Whether a handler may read its abort signal: its `handle` declares a second parameter, or its source could
 * reach it another way (`arguments`, a rest parameter, a bound or native function). A handler declared as
 * `handle(task)` cannot, so its tasks need no AbortController of their own (about 1.3 µs of CPU and a few
 * hundred bytes each, a tenth of a worker's cost per task).
 */
export function takesSignal(handler: TaskHandler): boolean {
  const handle = handler.handle;
  let uses = signalUse.get(handle);
  if (uses === undefined) {
    uses = handle.length >= 2 || MAY_REACH_ARGUMENTS.test(Function.prototype.toString.call(handle));
    signalUse.set(handle, uses);
  }
  return uses;
}

/** The abort controller of one run of `handler`; undefined when the handler cannot see its signal. */
export function runController(handler: TaskHandler): AbortController | undefined {
  return takesSignal(handler) ? new AbortController() : undefined;
}

/**
 * Anything a handler threw or rejected with, as an Error whose name, message and stack can be read: never
 * throws itself (a value whose toString throws, a Proxy that throws on every trap, an Error whose getters
 * throw each become a plain Error saying what was thrown).
 */
export function toError(thrown: unknown): Error {
  try {
    if (thrown instanceof Error) {
      // NOTE: read once here, so that recording the failure cannot throw later
      void `${thrown.name}${thrown.message}${thrown.stack ?? ''}`;
      return thrown;
    }
  } catch {
    return plainError(`a thrown ${typeof thrown} whose name, message or stack cannot be read`);
  }
  return plainError(textOf(thrown));
}

/** A thrown value's text (`String`), or what it is when it has none. */
function textOf(thrown: unknown): string {
  try {
    return String(thrown);
  } catch {
    return `a thrown ${typeof thrown} that cannot be turned into text`;
  }
}

function plainError(message: string): Error {
  const error = new Error(message);
  // NOTE: the value thrown had no stack; this one's would show where it was caught, not where it was thrown
  error.stack = undefined;
  return error;
}

/**
 * Calls a handler and reports its outcome to `settle` (null = success, with what the handler returned): a
 * synchronous throw, a rejection, or success. Both engines run handlers through this; timeouts and aborts settle from outside.
 * NOTE: a handler that returns no promise is done at once: no promise round for it (the hot path of
 * synchronous work). `controller` is the run's, from `runController` (undefined: the handler cannot see it).
 */
export function callHandler(
  handler: TaskHandler,
  task: ActiveTask,
  controller: AbortController | undefined,
  settle: (error: Error | null, result?: unknown) => void,
): void {
  let outcome: unknown;
  try {
    outcome = handler.handle(task, controller?.signal ?? NEVER_ABORTS);
  } catch (error) {
    settle(toError(error));
    return;
  }
  let thenable: boolean;
  try {
    thenable = !!outcome && typeof (outcome as PromiseLike<unknown>).then === 'function';
  } catch (error) {
    // a `then` getter that throws: the attempt failed
    settle(toError(error));
    return;
  }
  if (thenable) {
    // NOTE: adopted as a promise: a `then` that throws becomes a rejection, and one that calls back twice settles once
    Promise.resolve(outcome).then((result) => settle(null, result), (error: unknown) => settle(toError(error)));
  } else {
    settle(null, outcome);
  }
}
