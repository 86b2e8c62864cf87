import type { ActiveTask, Task } from '../interfaces/task.interface';
import { assertTaskType } from '../options/resolve-options';

/** Brand of the objects `defineTask` returns (`Symbol.for`: two copies of the library agree on it). */
const CONTRACT: unique symbol = Symbol.for('nestjs-distributed-queue.task-contract');

/** Key of the phantom payload type: exists only for the compiler, never on an object. */
declare const PAYLOAD: unique symbol;

/**
 * A task type declared once with its payload type, made by `defineTask`. Pass it wherever a task type
 * string goes (`@TaskWorker`, `submit`, `submitOrdered`, `getTask`, ...): the payload is then checked at
 * compile time. At run time it stands for its `type` string.
 *
 * `P` is the payload type; `O` is `true` for an ordered type (route queue: `submitOrdered` only) and
 * `false` for a delay queue type (`submit`, `cancel`, `reschedule` and the inspector).
 */
export interface TaskContract<P = unknown, O extends boolean = false> {
  /** The task type: the name the queues know. */
  readonly type: string;
  /** Whether the type is ordered. */
  readonly ordered: O;
  /** Marks an object made by `defineTask` (a contract cannot be written as a plain object). */
  readonly [CONTRACT]: true;
  /** Carries the payload type for the compiler; never set. */
  readonly [PAYLOAD]?: P;
}

/** The payload type of a contract: `TaskHandler<PayloadOf<typeof CloseOrder>>`. */
export type PayloadOf<C extends TaskContract<any, boolean>> = C extends TaskContract<infer P, boolean> ? P : never;

/**
 * A worker class for payload `P`: its `handle` must accept a `Task<P>`. Checked strictly (as a function
 * property, not a method), so a handler that expects more than `P` holds is refused.
 */
export type TaskWorkerClass<P> = new (...args: any[]) => { handle: (task: ActiveTask<P>, signal: AbortSignal) => unknown };

/** What `@TaskWorker(contract)` returns: a class decorator that accepts only handlers of the contract's payload. */
export type TypedTaskWorkerDecorator<P> = <T extends TaskWorkerClass<P>>(target: T) => void;

/**
 * Declares a task type and its payload once. The result is a frozen `{ type, ordered }` token to use in
 * place of the type string, so that submitters and the worker agree on the payload at compile time.
 * `ordered` must be written as a literal (`true` or `false`) for `submitOrdered` / `submit` to accept it.
 * @throws InvalidTaskTypeError when `type` cannot name a queue (as `@TaskWorker` and `submit` would).
 *
 * @example
 * ```ts
 * export const CloseOrder = defineTask<{ orderId: string }>('order.close');
 * export const ApplyLedger = defineTask<LedgerEvent>('ledger.apply', { ordered: true });
 *
 * await tasks.submit(CloseOrder, { orderId }, { delay: 30 * 60_000 });
 * await tasks.submitOrdered(ApplyLedger, accountId, event);
 * ```
 */
export function defineTask<P>(type: string, options: { ordered: true }): TaskContract<P, true>;
/** Declares a task type of the delay queue (not ordered) and its payload: see the overload above. */
export function defineTask<P>(type: string, options?: { ordered?: false }): TaskContract<P, false>;
export function defineTask<P>(type: string, options: { ordered?: boolean } = {}): TaskContract<P, boolean> {
  assertTaskType(type);
  return Object.freeze({ type, ordered: options.ordered === true, [CONTRACT]: true as const });
}

/** Whether `value` is a contract made by `defineTask`. */
export function isTaskContract(value: unknown): value is TaskContract<unknown, boolean> {
  return typeof value === 'object' && value !== null && (value as { [CONTRACT]?: unknown })[CONTRACT] === true;
}

/**
 * The type string of a type or contract. Anything else is returned as it is, for the caller's own
 * validation (`assertTaskType`) to report.
 */
export function typeOf(type: string | TaskContract<unknown, boolean>): string {
  return isTaskContract(type) ? type.type : type;
}

/** The type string of a type or contract, checked: `InvalidTaskTypeError` unless it can name a queue. */
export function checkedTypeOf(type: string | TaskContract<unknown, boolean>): string {
  const name = typeOf(type);
  assertTaskType(name);
  return name;
}
