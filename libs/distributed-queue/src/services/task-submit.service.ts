import { Inject, Injectable, Logger } from '@nestjs/common';
import { DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, DURABLE_WRITES, ROUTE_STORE, routeDelayType, TASK_TRACER } from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { checkedTypeOf, type TaskContract } from '../contracts/task-contract';
import {
  DurabilityError, InvalidSubmitOptionsError, PartitionFullError, RouteNotConfiguredError, SubmitIncompleteError, UnknownTaskTypeError,
} from '../errors';
import type {
  CallOptions, CancelResult, OrderedSubmitCallOptions, OrderedSubmitItem, OrderedSubmitResult, RescheduleOptions, SubmitCallOptions, SubmitItem,
  SubmitAndWaitOptions, SubmitResult, WaitOptions,
} from '../interfaces';
import { DelayQueueStore, type NewTask } from '../delay/delay-queue.store';
import { TaskEventBus } from '../events/task-event-bus';
import { encodePayload } from '../delay/task-codec';
import { encodeRouteItem, RouteProducer, type MoverPayload } from '../route/route-producer';
import type { RouteStore } from '../route/route.store';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { moveRequestId, newRequestId, randomTaskId, REQUEST_TTL_MS } from '../runtime/request-id';
import type { TaskTracer } from '../tracing/task-tracer';
import { withTraceContext } from '../tracing/trace-carrier';
import { checkDedupe, checkGroup, checkId, checkKey, checkOptionNames, checkPriority, toDeadline, toDue } from './task-input';
import { submitEach } from './submit-each';
import { callDurability, type ResolvedDurability } from '../options/resolve-durability';
import type { DurableWrites, WriteMark } from '../redis/durable-writes';
import { TaskWaiters } from '../delay/task-waiters';

/** Tasks per submit script call: bounds the time one call holds Redis. */
const SUBMIT_CHUNK = 500;
const SUBMIT_KEYS = ['id', 'delay', 'runAt', 'payload', 'priority', 'group', 'expireAt', 'ttlMs', 'dedupe'];
const ORDERED_KEYS = ['key', 'payload', 'id', 'delay', 'runAt'];

/**
 * Submits tasks to both engines, cancels and reschedules them. Injectable anywhere. Every `type` is a type
 * string or a contract from `defineTask` (then the payload is checked against it at compile time; an ordered
 * contract goes to `submitOrdered`/`submitOrderedMany` only, any other to the other methods).
 */
@Injectable()
export class TaskSubmitService {
  private readonly producer?: RouteProducer;
  /** The route producer of durable calls (on the durable connection). */
  private readonly durableProducer?: RouteProducer;
  /** Per key, the last move of a due delayed ordered task in flight (see `enqueueDueOrdered`). */
  private readonly moving = new Map<string, Promise<void>>();

  /** @internal Nest creates it (dependency injection): inject the class, do not construct it. */
  constructor(
    private readonly store: DelayQueueStore,
    private readonly explorer: DistributedQueueExplorer,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(ROUTE_STORE) private readonly routeStore: RouteStore | null,
    @Inject(TASK_TRACER) private readonly tracer: TaskTracer | null,
    private readonly bus: TaskEventBus,
    @Inject(DURABLE_WRITES) private readonly durable: DurableWrites | null,
    private readonly waiters: TaskWaiters,
  ) {
    if (routeStore) this.producer = new RouteProducer(routeStore, new Logger('DistributedQueue'));
    if (durable?.routeStore) this.durableProducer = new RouteProducer(durable.routeStore, new Logger('DistributedQueue'));
  }

  /**
   * Submits one task and returns its id. When a task with the given id exists (delayed, ready, running or
   * dead), nothing is created or changed and the same id is returned; use `submitMany` to learn which.
   * With durability (module or call option), it resolves once the replicas acknowledged the task.
   * @throws InvalidTaskTypeError, UnknownTaskTypeError, InvalidSubmitOptionsError, InvalidPayloadError,
   * DurabilityError (its `result`: the id, written on the master)
   */
  async submit<P>(type: string | TaskContract<P>, payload: NoInfer<P>, options: SubmitCallOptions = {}): Promise<string> {
    const { durability, ...task } = options ?? {};
    try {
      const [result] = await this.submitMany(type, [{ ...task, payload }], { durability });
      return result.id;
    } catch (error) {
      if (!(error instanceof DurabilityError)) throw error;
      const [written] = error.result as SubmitResult[];
      throw new DurabilityError(error.acknowledged, error.required, error.timeoutMs, written.id, error.reason);
    }
  }

  /**
   * Submits a delay-queue task and resolves with its handler's result once it completed (undefined when it
   * returned nothing). Given no `id`, the task gets a random one (16 characters), so that the wait is in
   * place before the submit: a completion cannot be missed. The id of a task still waiting or running is not
   * submitted again: that task is waited for (a finished task's id makes a new task, as `submit` does).
   * Works across processes (any worker may run it) and reconnects; costs nothing when nobody waits.
   * @throws (rejects) the submit's errors; `TaskDeadError` (its last error), `TaskCancelledError`,
   * `ResultNotKeptError`, `WaitTimeoutError` (`timeoutMs`, default 30 s; the task goes on), the signal's
   * reason when aborted; `InvalidSubmitOptionsError` for an ordered type (their results are not kept);
   * `NoRedisConnectionError` in service mode with `service.url`
   */
  async submitAndWait<R = unknown, P = unknown>(
    typeOrContract: string | TaskContract<P>, payload: NoInfer<P>, options: SubmitAndWaitOptions = {},
  ): Promise<R> {
    const type = checkedTypeOf(typeOrContract);
    this.assertDelayType(type);
    const { timeoutMs, signal, durability, ...task } = options ?? {};
    const id = task.id ?? randomTaskId();
    const submit = async (): Promise<boolean> => (await this.submitMany(type, [{ ...task, id, payload }], { durability }))[0].created;
    return (await this.waiters.wait(type, id, { timeoutMs, signal }, submit)) as R;
  }

  /**
   * Resolves with the result of a delay-queue task submitted earlier once it completed (at once when it has:
   * while it is among the type's last `keepDone` finished tasks). Rejects as `submitAndWait` does, and with
   * `TaskNotFoundError` when no task has this id (never submitted, cancelled before it ran, or finished
   * longer ago than `keepDone` remembers).
   */
  async waitFor<R = unknown>(typeOrContract: string | TaskContract<unknown>, id: string, options: WaitOptions = {}): Promise<R> {
    const type = checkedTypeOf(typeOrContract);
    this.assertDelayType(type);
    return (await this.waiters.wait(type, checkId(id), options)) as R;
  }

  /**
   * Submits many tasks of one type in few round trips; tasks due at the same time run in the order of
   * `items`. Every item is validated before anything is written, so a bad item rejects the whole call.
   * `options.durability`: this call's (see the module option).
   * @throws DurabilityError (its `result`: the results, written on the master)
   */
  async submitMany<P>(typeOrContract: string | TaskContract<P>, items: SubmitItem<NoInfer<P>>[], options?: CallOptions): Promise<SubmitResult[]> {
    const type = checkedTypeOf(typeOrContract);
    const durability = this.durabilityOf(options);
    return this.traced(type, items, (traceparent) => this.submitDelayMany(type, items, traceparent, durability));
  }

  private async submitDelayMany(type: string, items: SubmitItem[], traceparent: string | undefined, durability: ResolvedDurability | null): Promise<SubmitResult[]> {
    this.assertDelayType(type);
    if (!Array.isArray(items)) throw new InvalidSubmitOptionsError('items', 'must be an array');
    const tasks = items.map((item, index) => this.toNewTask(item, index, traceparent));
    const marks: WriteMark[] = [];
    const dedupes = items.map((item) => checkDedupe(item.dedupe));
    if (dedupes.some((d) => d !== undefined)) {
      const written = await submitEach(type, tasks, dedupes, (call) => this.write(durability, marks, type, call), (n) => this.bus.submitted(type, n));
      return this.confirmed(durability, marks, written);
    }
    const results: SubmitResult[] = [];
    for (let i = 0; i < tasks.length; i += SUBMIT_CHUNK) {
      const chunk = tasks.slice(i, i + SUBMIT_CHUNK);
      let written: SubmitResult[];
      try {
        written = await this.write(durability, marks, type, (store) => store.submit(type, chunk, newRequestId()));
      } catch (error) {
        // NOTE: a chunk may be written in part (a service.url store sends it in several calls, each all or
        // nothing): its error says which of its items were written. Those count as submitted, and the
        // error thrown here says so too, else a repeat without ids would create them twice.
        if (error instanceof SubmitIncompleteError) {
          const part = Array.from(chunk, (_, j) => error.results[j] as SubmitResult | undefined);
          this.bus.submitted(type, part.filter((r) => r?.created).length);
          if (i === 0 && chunk.length === tasks.length) throw error;
          throw new SubmitIncompleteError(type, [...results, ...part, ...new Array<undefined>(tasks.length - i - chunk.length)], error.cause);
        }
        // NOTE: each call is all or nothing; say which items earlier calls wrote.
        if (i === 0) throw error;
        throw new SubmitIncompleteError(type, [...results, ...new Array<undefined>(tasks.length - i)], error);
      }
      this.bus.submitted(type, written.filter((r) => r.created).length);
      results.push(...written);
    }
    return this.confirmed(durability, marks, results);
  }

  /**
   * Cancels a waiting task, or asks a running one to stop (it is not retried). `options.durability`: this
   * call's (see the module option). A flow's node (id `&<flow>:<ref>`) is refused: its flow would wait for
   * it forever; cancel the flow (`TaskFlowService.cancelFlow`).
   * @throws InvalidSubmitOptionsError (a flow's node), DurabilityError (its `result`: what the cancel did on the master)
   */
  async cancel(typeOrContract: string | TaskContract<unknown>, id: string, options?: CallOptions): Promise<CancelResult> {
    const type = checkedTypeOf(typeOrContract);
    const durability = this.durabilityOf(options);
    const marks: WriteMark[] = [];
    const checked = checkId(id);
    if (checked.startsWith('&')) throw new InvalidSubmitOptionsError('id', `"${checked}" is a flow's node: cancel its flow (TaskFlowService.cancelFlow)`);
    return this.confirmed(durability, marks, await this.write(durability, marks, type, (store) => store.cancel(type, checked)));
  }

  /**
   * Moves a waiting task to a new due time (`delay` or `runAt`); it keeps its submission order among tasks
   * due at the same time. Returns false when the task is not waiting (running, finished, dead or unknown).
   * `when.durability`: this call's (see the module option).
   * @throws DurabilityError (its `result`: whether the task was moved, on the master)
   */
  async reschedule(typeOrContract: string | TaskContract<unknown>, id: string, when: RescheduleOptions): Promise<boolean> {
    const type = checkedTypeOf(typeOrContract);
    const durability = this.durabilityOf(when);
    const marks: WriteMark[] = [];
    const [checked, due] = [checkId(id), toDue(when)];
    const moved = (await this.write(durability, marks, type, (store) => store.reschedule(type, checked, due))) !== null;
    return this.confirmed(durability, marks, moved);
  }

  /**
   * Changes a waiting task's priority (0, the most urgent, to 1000) in O(log n): a due task takes its turn in
   * the new priority at once (FIFO among that priority's tasks by due time), a delayed one when it falls due.
   * Returns false when the task is not waiting (running, finished, dead or unknown). Delay-queue types only.
   * @throws InvalidSubmitOptionsError (a bad priority, or an ordered type), DurabilityError (its `result`:
   * whether the task was changed, on the master)
   */
  async changePriority(typeOrContract: string | TaskContract<unknown>, id: string, priority: number, options?: CallOptions): Promise<boolean> {
    const type = checkedTypeOf(typeOrContract);
    this.assertDelayType(type);
    const durability = this.durabilityOf(options);
    const marks: WriteMark[] = [];
    const [checked, p] = [checkId(id), checkPriority(priority)];
    const changed = (await this.write(durability, marks, type, (store) => store.changePriority(type, checked, p))) !== null;
    return this.confirmed(durability, marks, changed);
  }

  /**
   * Submits an ordered task: all tasks of one `key` run one after another in submission order, different
   * keys in parallel. With `delay`/`runAt` it waits in the delay queue and enters its partition when due.
   * The result tells what the partition did (`queued`, `discarded`, `dropped-oldest`; `scheduled` if delayed).
   * @throws PartitionFullError (rejectStrategy Exception), RouteNotConfiguredError, InvalidSubmitOptionsError,
   * UnknownTaskTypeError, InvalidPayloadError, DurabilityError (its `result`: this call's result, on the master)
   */
  async submitOrdered<P>(
    typeOrContract: string | TaskContract<P, true>, key: string, payload: NoInfer<P>, options: OrderedSubmitCallOptions = {},
  ): Promise<OrderedSubmitResult> {
    const type = checkedTypeOf(typeOrContract);
    const { durability: asked, ...task } = options ?? {};
    const durability = this.durabilityOf({ durability: asked });
    try {
      const [result] = await this.traced(type, 1, async (traceparent) => {
        const results = await this.submitOrderedEntries(type, [{ ...task, key, payload }], traceparent, durability);
        if (results[0].outcome === 'rejected') throw new PartitionFullError(results[0].partition, this.routeStore!.options.maxPartitionSize);
        return results;
      });
      return result;
    } catch (error) {
      if (!(error instanceof DurabilityError)) throw error;
      throw new DurabilityError(error.acknowledged, error.required, error.timeoutMs, (error.result as OrderedSubmitResult[])[0], error.reason);
    }
  }

  /**
   * Submits many ordered tasks of one type with one script call per partition; tasks of one key keep the
   * order of `items`. Every item is validated before anything is written. `options.durability`: this
   * call's (see the module option): every partition written (and the delayed ones' queue) is confirmed.
   * @throws DurabilityError (its `result`: the results, written on the master)
   */
  async submitOrderedMany<P>(
    typeOrContract: string | TaskContract<P, true>, items: OrderedSubmitItem<NoInfer<P>>[], options?: CallOptions,
  ): Promise<OrderedSubmitResult[]> {
    const type = checkedTypeOf(typeOrContract);
    const durability = this.durabilityOf(options);
    return this.traced(type, items, (traceparent) => this.submitOrderedEntries(type, items, traceparent, durability));
  }

  private async submitOrderedEntries(
    type: string, items: OrderedSubmitItem[], traceparent: string | undefined, durability: ResolvedDurability | null,
  ): Promise<OrderedSubmitResult[]> {
    this.orderedProducer(type);
    const producer = durability ? this.durableProducer! : this.producer!;
    const marks: WriteMark[] = [];
    if (!Array.isArray(items)) throw new InvalidSubmitOptionsError('items', 'must be an array');
    const entries = items.map((item, index) => {
      checkOptionNames(item, ORDERED_KEYS, index);
      const key = checkKey(item.key, index);
      const id = item.id === undefined ? randomTaskId() : checkId(item.id, !item.id?.startsWith?.('#'));
      const due = toDue(item);
      const entry = { key, id, item: encodeRouteItem(id, type, key, encodePayload(item.payload, this.options.maxPayloadBytes), traceparent) };
      return { index, entry, due, delayed: 'at' in due || due.delay > 0 };
    });
    const results: OrderedSubmitResult[] = new Array(entries.length);
    const now = entries.filter((e) => !e.delayed);
    // NOTE: one call per partition, then one for the delayed ones: each all or nothing; say which were written.
    const incomplete = (error: unknown): SubmitIncompleteError<OrderedSubmitResult> => new SubmitIncompleteError(type, [...results], error);
    const written = this.partitionMarks(durability, marks);
    if (durability) await this.durable!.idle();
    const pushed = await producer.pushMany(now.map((e) => e.entry), false, written).catch((error: unknown) => {
      if (!(error instanceof SubmitIncompleteError)) throw error;
      now.forEach((e, i) => (results[e.index] = error.results[i] as OrderedSubmitResult));
      throw incomplete(error.cause);
    });
    now.forEach((e, i) => (results[e.index] = pushed[i]));
    this.bus.submitted(type, pushed.filter((r) => r.outcome === 'queued' || r.outcome === 'dropped-oldest').length);
    const later = entries.filter((e) => e.delayed);
    if (later.length > 0) {
      const partitions = await producer.partitionsOf(later.map((e) => e.entry.key));
      const delayType = routeDelayType(this.routeStore!.options.qId);
      const at = Date.now();
      const tasks = later.map((e) => ({ id: e.entry.id, due: e.due, payload: JSON.stringify({ key: e.entry.key, item: e.entry.item, at }) }));
      const delayed = await this.write(durability, marks, delayType, (store) => store.submit(delayType, tasks, newRequestId()))
        .catch((error: unknown) => {
          if (!(error instanceof SubmitIncompleteError)) throw now.length > 0 ? incomplete(error) : error;
          // NOTE: written in part: the items it wrote are scheduled (see submitDelayMany).
          later.forEach((e, i) => {
            if (error.results[i] !== undefined) results[e.index] = { id: e.entry.id, partition: partitions[i], outcome: 'scheduled' };
          });
          this.bus.submitted(type, error.results.filter((r) => (r as SubmitResult | undefined)?.created).length);
          throw incomplete(error.cause);
        });
      this.bus.submitted(type, delayed.filter((r) => r.created).length);
      later.forEach((e, i) => (results[e.index] = { id: e.entry.id, partition: partitions[i], outcome: 'scheduled' }));
    }
    return this.confirmed(durability, marks, results);
  }

  /**
   * @internal Moves a due delayed ordered task into its partition. The mover's handlers start in the order
   * of its reservations (due time, then submission): the moves of one key are chained in that order, so
   * that tasks of one key due together enter their partition in submission order (on one instance).
   * @throws PartitionFullError when its partition is full and does not take it (the move is retried)
   */
  async enqueueDueOrdered(id: string, { key, item, at }: MoverPayload, dueAt = 0, leaseMs = 0): Promise<void> {
    if (!this.producer) throw new RouteNotConfiguredError('A delayed ordered task');
    // NOTE: under the module's durability the move is confirmed (WAIT on the partition's master) before the
    // mover acks: on a cluster the ack's own WAIT runs on the mover type's master and confirms nothing of the
    // partition's write, which a failover could then lose with the mover task done. Unconfirmed, the move
    // fails with DurabilityError and is retried (the repeat appends nothing: see below) until confirmed.
    const durability = this.durabilityOf(undefined);
    const producer = durability ? this.durableProducer! : this.producer;
    const marks: WriteMark[] = [];
    const written = this.partitionMarks(durability, marks);
    // NOTE: named after the task and its submission (see MoveCall): a mover that died after the push and
    // before its ack, or whose push failed (its reply lost, or not confirmed), is run again and repeats this
    // very call, which appends nothing twice. Not after its due time: a retry moves that (a mover task of an
    // earlier version has no `at`: its due time serves, as before).
    const call = { requestId: moveRequestId(typeof at === 'number' ? at : dueAt, id), ttlMs: Math.max(REQUEST_TTL_MS, 3 * leaseMs) };
    const push = async (): Promise<OrderedSubmitResult> => {
      if (durability) await this.durable!.idle();
      return producer.enter({ key, id, item }, call, written);
    };
    const move = (this.moving.get(key) ?? Promise.resolve()).then(push);
    const settled = move.then(() => undefined, () => undefined);
    this.moving.set(key, settled);
    void settled.then(() => this.moving.get(key) === settled && this.moving.delete(key));
    await move;
    await this.confirmed(durability, marks, undefined);
  }

  /**
   * Runs a submit in its `<type> publish` span when tracing is on (`send` gets the traceparent to store);
   * else just runs it.
   */
  private traced<R extends { id: string }>(type: string, items: unknown, send: (traceparent: string | undefined) => Promise<R[]>): Promise<R[]> {
    if (!this.tracer) return send(undefined);
    return this.tracer.publish(type, Array.isArray(items) ? items.length : 1, send);
  }

  /** A call's durability, checked (before anything is written); null when it is not durable. */
  private durabilityOf(options: CallOptions | undefined): ResolvedDurability | null {
    return callDurability(options?.durability, this.options.durability ?? null, this.options.redisTimeoutMs);
  }

  /**
   * Runs a write of `type`'s delay queue: on the durable connection when the call is durable (then `marks`
   * gets where it was applied), else on the commands connection.
   */
  private write<T>(durability: ResolvedDurability | null, marks: WriteMark[], type: string, call: (store: DelayQueueStore) => Promise<T>): Promise<T> {
    return durability ? this.durable!.delayWrite(marks, type, call) : call(this.store);
  }

  /** Under durability, notes in `marks` where each partition write was applied (for `pushMany`'s `written`). */
  private partitionMarks(durability: ResolvedDurability | null, marks: WriteMark[]): ((partition: number) => void) | undefined {
    if (!durability) return undefined;
    const durable = this.durable!;
    return (p: number) => void marks.push(durable.mark(durable.routeStore!.keys.partition(p).list));
  }

  /** `result` once the replicas acknowledged every marked write (at once when the call is not durable). */
  private confirmed<R>(durability: ResolvedDurability | null, marks: WriteMark[], result: R): Promise<R> {
    return durability ? this.durable!.confirmed(marks, durability, result) : Promise.resolve(result);
  }

  private orderedProducer(type: string): RouteProducer {
    if (!this.producer) throw new RouteNotConfiguredError(`Ordered task type "${type}"`);
    const known = this.explorer.isKnown(type);
    if (known && !this.explorer.isOrdered(type)) {
      throw new InvalidSubmitOptionsError('key', `type "${type}" is not ordered: use submit(), or mark it { ordered: true }`);
    }
    if (!known && this.options.strictTypes) throw new UnknownTaskTypeError(type);
    return this.producer;
  }

  private assertDelayType(type: string): void {
    if (this.options.strictTypes && !this.explorer.isKnown(type)) throw new UnknownTaskTypeError(type);
    if (this.explorer.isOrdered(type)) {
      throw new InvalidSubmitOptionsError('key', `type "${type}" is ordered: use submitOrdered(type, key, payload)`);
    }
  }

  private toNewTask(item: SubmitItem, index: number, traceparent: string | undefined): NewTask {
    checkOptionNames(item, SUBMIT_KEYS, index);
    const due = toDue(item);
    const deadline = toDeadline(item, due);
    return {
      id: item.id === undefined ? '' : checkId(item.id, true),
      due,
      ...(deadline ? { deadline } : {}),
      payload: withTraceContext(encodePayload(item.payload, this.options.maxPayloadBytes), traceparent),
      ...(item.priority === undefined ? {} : { priority: checkPriority(item.priority) }),
      ...(item.group === undefined ? {} : { group: checkGroup(item.group) }),
    };
  }
}
