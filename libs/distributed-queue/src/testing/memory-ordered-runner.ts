import type { DiscoveredWorker } from '../distributed-queue.explorer';
import type { FlowProgress } from '../flow/flow-progress';
import { isUnrecoverable, ShutdownError, TaskTimeoutError } from '../errors';
import type { TaskEventBus } from '../events/task-event-bus';
import type { TaskEventName } from '../interfaces';
import { OrderedTask } from '../runtime/active-task';
import { backoffDelay } from '../runtime/backoff';
import { keptError, stackOf } from '../runtime/error-stack';
import { callHandler, runController } from '../runtime/handler-call';
import type { MemoryItem, MemoryRouteStore } from './memory-route-store';

/**
 * Runs the in-memory route queue's ordered tasks as a partition runner does: per partition, the first
 * waiting item of each key (never two of one key at once, so a key's tasks run in submission order),
 * different keys at once up to `route.keyConcurrency`; a failed attempt is retried in place after its
 * backoff (its key waits; on the test clock), the last one buried in the partition's dead letters. Events
 * as the partition runner emits them.
 */
export class MemoryOrderedRunner {
  /** Running attempts: each one's end. */
  readonly attempts = new Map<object, Promise<void>>();
  /** Running attempts' abort controllers (those whose handler can see its signal). */
  private readonly controllers = new Map<object, AbortController>();
  private closed = false;
  /** Flows' progress: an ordered node's context before it runs, its completion and death recorded (see runner-flows.ts). */
  flows?: FlowProgress;

  constructor(
    private readonly route: MemoryRouteStore,
    private readonly workers: () => DiscoveredWorker[],
    private readonly bus: TaskEventBus,
  ) {}

  /** Starts what may start now; returns how many attempts it started. */
  startDue(): number {
    if (this.closed) return 0;
    const now = this.route.clock.now();
    const workers = new Map(this.workers().filter((w) => w.options.ordered).map((w) => [w.type, w]));
    let started = 0;
    this.route.partitions.forEach((p, partition) => {
      if (p.paused) return;
      const busy = new Set([...p.running.values()].map((e) => e.item.key));
      let free = this.route.options.keyConcurrency - busy.size;
      // NOTE: a copy: starting an item takes it out of the list (and a synchronous handler may end at once)
      for (const entry of [...p.list]) {
        if (free <= 0) break;
        if (busy.has(entry.item.key)) continue;
        // NOTE: the key's first item, whether it can start now or not: the items behind it wait for it
        busy.add(entry.item.key);
        const worker = workers.get(entry.item.type);
        if (!worker || (entry.retryAt !== undefined && entry.retryAt > now)) continue;
        this.start(worker, partition, entry);
        free--;
        started++;
      }
    });
    return started;
  }

  /** The earliest time a waiting retry falls due, or null (items due now are started by `startDue`). */
  nextDueAt(): number | null {
    let next: number | null = null;
    for (const p of this.route.partitions) {
      if (p.paused) continue;
      for (const entry of p.list) if (entry.retryAt !== undefined && (next === null || entry.retryAt < next)) next = entry.retryAt;
    }
    return next;
  }

  /** Whether an item could start now: the first item of a key, its retry due, a worker for its type. */
  hasDue(): boolean {
    const now = this.route.clock.now();
    const types = new Set(this.workers().filter((w) => w.options.ordered).map((w) => w.type));
    return this.route.partitions.some((p) => {
      if (p.paused) return false;
      const seen = new Set<string>();
      return p.list.some((e) => {
        if (seen.has(e.item.key)) return false;
        seen.add(e.item.key);
        return types.has(e.item.type) && (e.retryAt === undefined || e.retryAt <= now);
      });
    });
  }

  /** Stops: every running handler's signal aborts (ShutdownError); nothing starts any more. */
  stop(): void {
    this.closed = true;
    for (const controller of this.controllers.values()) controller.abort(new ShutdownError());
    this.controllers.clear();
  }

  private start(worker: DiscoveredWorker, partition: number, entry: MemoryItem): void {
    const p = this.route.partitions[partition];
    p.list.splice(p.list.indexOf(entry), 1);
    p.running.set(entry.item.seq, entry);
    const attempt = entry.failures + 1;
    const { id, type, key, payload, at, traceContext } = entry.item;
    const view = new OrderedTask(id, type, key, payload, attempt, at, { partition, epoch: 1 }, traceContext);
    const controller = runController(worker.handler);
    const startedAt = this.route.clock.now();
    const node = this.flows && id.startsWith('&') ? this.flows : undefined;
    const handle = {};
    let ended = false;
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(() => finish(new TaskTimeoutError(worker.options.timeoutMs)), worker.options.timeoutMs);
      timer.unref?.();
      let settled = false;
      const finish = (error: Error | null, result?: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) controller?.abort(error);
        const end = (failure: Error | null): void => {
          ended = true;
          this.attempts.delete(handle);
          this.controllers.delete(handle);
          if (this.closed) return resolve();
          const buried = this.settle(worker, partition, entry, view, startedAt, failure, result);
          if (node && buried) void node.dead(id, { ...buried, failedAt: this.route.clock.now() }).catch(() => undefined).finally(resolve);
          else resolve();
        };
        if (error || !node) return end(error);
        let json: string;
        try {
          json = node.encodeResult(result);
        } catch (refused) {
          // NOTE: a result the flow refuses buries the node at once (see settleFlowNode)
          entry.failures = worker.options.maxAttempts - 1;
          return end(refused as Error);
        }
        node.completed(id, json).then(() => end(null), (failure: Error) => end(failure));
      };
      if (!node) return callHandler(worker.handler, view, controller, finish);
      node.context(id).then((flow) => !settled && callHandler(worker.handler, Object.assign(view, { flow }), controller, finish), (error: Error) => finish(error));
    });
    if (!ended) {
      this.attempts.set(handle, done);
      if (controller) this.controllers.set(handle, controller);
    }
  }

  /** Records an attempt's end; returns the dead letter's error when it buried the item. */
  private settle(
    worker: DiscoveredWorker, partition: number, entry: MemoryItem, view: OrderedTask, startedAt: number, error: Error | null, result: unknown,
  ): { name: string; message: string; attempts: number; stack?: string } | undefined {
    const p = this.route.partitions[partition];
    const now = this.route.clock.now();
    const emit = (event: TaskEventName, extra: { error?: Error; result?: unknown }): void => {
      if (this.bus.wants('local', view.type, event)) this.bus.emit({ event, scope: 'local', task: view, ...extra, startedAt, durationMs: now - startedAt, at: now });
    };
    p.running.delete(entry.item.seq);
    if (!error) {
      emit('completed', { result });
      this.route.notify();
      return undefined;
    }
    emit('failed', { error });
    entry.failures++;
    let buried: { name: string; message: string; attempts: number; stack?: string } | undefined;
    if (entry.failures >= worker.options.maxAttempts || isUnrecoverable(error)) {
      const stack = stackOf(error);
      buried = { ...keptError(error), attempts: entry.failures, ...(stack ? { stack } : {}) };
      this.route.bury(partition, entry, buried);
      emit('dead', { error });
    } else {
      entry.retryAt = now + backoffDelay(worker.options.backoff, entry.failures);
      // NOTE: back at the head of its key: the key's later items still wait for it
      p.list.splice(this.headOf(p.list, entry), 0, entry);
      emit('retrying', { error });
    }
    this.route.notify();
    return buried;
  }

  /** Where a retried item goes back: before every waiting item that came after it. */
  private headOf(list: MemoryItem[], entry: MemoryItem): number {
    const at = list.findIndex((other) => other.item.seq > entry.item.seq);
    return at < 0 ? list.length : at;
  }
}
