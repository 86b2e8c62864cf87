import { CorruptTaskError, isUnrecoverable, LeaseLostError, TaskTimeoutError } from '../errors';
import { backoffDelay } from '../runtime/backoff';
import { SHUTDOWN_CALL_MS, stopWithGrace } from '../runtime/graceful-stop';
import { callHandler, runController, toError } from '../runtime/handler-call';
import { failedAttemptLine, keptError, stackOf } from '../runtime/error-stack';
import { WakeSignal } from '../runtime/wake-signal';
import { withTimeout } from '../runtime/with-timeout';
import { decodeRouteItem, type RouteItem, type RouteStore } from './route.store';
import { PartitionAcks } from './partition-acks';
import { RunnerEvents } from './runner-events';
import { tryOpenGate } from './route-topology';
import type { TaskFlow } from '../interfaces';
import { OrderedTask } from '../runtime/active-task';
import { FlowProgress } from '../flow/flow-progress';
import { settleFlowNode } from './runner-flows';
import { countedInOutage, reportFailure } from '../redis/outage-log';
import type { OrderedWorker, RunnerContext } from './runner-context';
import type { Slots } from './slots';
import { IDLE_MS, IdleBackoff } from './idle-backoff';

export type { OrderedWorker, RunnerContext } from './runner-context';
const RETRY_MS = 200;
/** Settles one running attempt: null when it succeeded, with what its handler returned. */
type Settle = (error: Error | null, result?: unknown) => void;

const errorJson = (error: Error, attempts: number) => JSON.stringify({ ...keptError(error), attempts, stack: stackOf(error) });

/**
 * Consumes one owned partition: takes a batch (replaying what a previous owner left in flight first), runs
 * the keys of the batch in parallel and each key's tasks in order, acks as they finish, and hands the
 * partition over cooperatively when asked. Every Redis write is fenced by (machine, epoch).
 */
export class PartitionRunner {
  /** Stopped or lost: start nothing, end the loop. */
  private stopping = false;
  /**
   * When a stopping runner gives up acking (performance.now() ms): `SHUTDOWN_CALL_MS` after its running
   * tasks' grace. Past it (Redis unreachable) it stops all the same: those tasks stay in flight and the
   * next owner runs them again.
   */
  private lastAcksBy = Infinity;
  private ended = false;
  /** Asked to hand over: start nothing; once the running tasks ended and were acked, release. */
  private revoking = false;
  /** The route queue is paused: start nothing; what was not started stays in flight for after the resume. */
  private paused = false;
  /** Pause notices received: one arriving while a take is in flight voids that take's batch. */
  private pauseNotices = 0;
  /** Aborted when no task may start any more (stopping, lost, revoking, paused): ends the waits for a slot. */
  private halt = new AbortController();
  /** Notified when work may have arrived or the state changed. */
  private readonly wake = new WakeSignal();
  private readonly idle = new IdleBackoff(); // how long an empty take sleeps next
  /** Running attempts: how each settles, its task's id and its abort controller (none when its handler cannot see it). */
  private readonly running = new Map<Settle, { id: string; controller: AbortController | undefined }>();
  private readonly acks: PartitionAcks;
  /**
   * Each running item's current attempt (its start, epoch ms, and number) and the error of the one before
   * when it failed, until the item is finished: the history's row gets them with the ack.
   */
  private readonly starts = new Map<number, { at: number; attempt: number; failed?: Error; result?: unknown }>();
  /** Flow nodes' `task.flow`, read before their first attempt. */
  private readonly flowViews = new Map<number, TaskFlow>();
  private readonly events: RunnerEvents;
  readonly done: Promise<void>;

  constructor(
    readonly partition: number,
    readonly epoch: number,
    private readonly ctx: RunnerContext,
  ) {
    this.acks = new PartitionAcks(ctx.store, partition, ctx.me, epoch, () => this.lost(), ctx.events, ctx.durableAcks, ctx.logger);
    this.events = new RunnerEvents(ctx.events, (item, attempt) => this.view(item, attempt));
    this.done = this.loop().finally(() => {
      this.ended = true;
      this.acks.close();
      this.wake.close();
      ctx.onEnd(this);
    });
  }

  /** Work arrived or ownership changed: look now. */
  notify(): void {
    this.idle.reset();
    this.wake.notify();
  }

  /**
   * The scheduler asked for the partition: start no further task (not even a retry), let the running ones
   * end, ack them, then release the partition with the rest of the batch left in flight for the next owner.
   */
  revoke(): void {
    if (this.revoking || this.ended) return;
    this.revoking = true;
    this.halt.abort();
    this.notify();
  }

  /**
   * The route queue was paused (message `h:<partition>`): start no further task (not even a retry); running
   * ones finish and are acked; the rest of the batch stays in flight until a take after the resume.
   */
  pause(): void {
    if (this.ended) return;
    this.paused = true;
    this.pauseNotices++;
    this.halt.abort();
    this.notify();
  }

  /** Ownership is gone (fenced): abort at once; the new owner replays what was in flight. */
  lost(): void {
    if (this.ended) return;
    this.stopping = true;
    this.lastAcksBy = Math.min(this.lastAcksBy, performance.now() + SHUTDOWN_CALL_MS);
    this.halt.abort();
    for (const [run, { id }] of [...this.running]) this.abortRun(run, new LeaseLostError(id, this.partition));
    this.notify();
  }

  /** Graceful stop: no new task; the running ones get `timeoutMs`, then are aborted and left for the next owner. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    this.lastAcksBy = Math.min(this.lastAcksBy, performance.now() + timeoutMs + SHUTDOWN_CALL_MS + (this.ctx.durableAcks?.policy.timeoutMs ?? 0));
    this.halt.abort();
    this.notify();
    await stopWithGrace(this.done, timeoutMs, (reason) => {
      for (const run of [...this.running.keys()]) this.abortRun(run, reason);
    });
    await this.done;
  }

  private async loop(): Promise<void> {
    const { store, me } = this.ctx;
    const maxReplays = Math.max(...[...this.ctx.workers.values()].map((w) => w.options.maxAttempts), 1);
    while (!this.stopping) {
      if (this.revoking) {
        if (await this.handOver()) return;
        continue;
      }
      if (!this.ctx.leaseFresh(this.partition)) {
        await this.wake.sleep(RETRY_MS);
        continue;
      }
      let taken;
      const notices = this.pauseNotices;
      // NOTE: what finished must be acked before the take, or the take would replay it: the acks are sent
      // just ahead of it on the same connection, so Redis runs them first and one round trip serves both.
      await this.acks.idle();
      if (this.acks.busy) continue;
      const acked = this.acks.size > 0 ? this.acks.flush().then(() => true, (error: Error) => this.warnAckFailed(error)) : undefined;
      // NOTE: durable acks go on another connection (see PartitionAcks.durable): the take waits for their reply.
      if (acked && this.acks.durable && !(await acked)) {
        await this.wake.sleep(RETRY_MS);
        continue;
      }
      this.wake.reset();
      try {
        taken = await store.take(this.partition, me, this.epoch, maxReplays);
      } catch (error) {
        reportFailure(this.ctx.logger, '[route] take', error, `[route p${this.partition}] take failed: ${(error as Error).message}`);
        await this.wake.sleep(RETRY_MS);
        continue;
      }
      // NOTE: acks that failed leave their tasks in flight: this take may have returned them again. Ignore
      // it; the next take, after the acks, returns what is really left.
      if (acked && !(await acked)) {
        await this.wake.sleep(RETRY_MS);
        continue;
      }
      switch (taken.status) {
        case 'lost':
          return;
        case 'revoking':
          this.revoke();
          break;
        case 'gated':
          if (!(await tryOpenGate(store, this.partition).catch(() => false))) await this.wake.sleep(RETRY_MS);
          break;
        case 'expired':
          await this.wake.sleep(RETRY_MS);
          break;
        case 'empty':
          // NOTE: a push that published while the take was in flight must not be slept through.
          if (!this.wake.notified) await this.wake.sleep(this.idle.wait());
          break;
        case 'paused':
          this.paused = true;
          if (!this.wake.notified) await this.wake.sleep(IDLE_MS);
          break;
        case 'ok':
          // NOTE: a pause noticed while the take was in flight may be newer than the take: take again (the
          // batch stays in flight for this epoch, so it is not counted as a replay).
          if (notices !== this.pauseNotices) break;
          if (this.paused) this.unpause();
          await this.runBatch(taken.items, taken.replays);
          break;
      }
    }
    await this.lastAcks();
  }

  /**
   * A stopping runner takes no more: what it finished is acked here, until `lastAcksBy`. What is not acked
   * by then (Redis unreachable) stays in flight, and the partition's next owner runs it again.
   */
  private async lastAcks(): Promise<void> {
    while (this.acks.size > 0 || this.acks.busy) {
      const left = this.lastAcksBy - performance.now();
      if (left <= 0) {
        this.ctx.logger.warn?.(`[route p${this.partition}] stopped before its last acks reached Redis: the partition's next owner runs those tasks again`);
        return;
      }
      try {
        await withTimeout(this.acks.busy ? this.acks.idle() : this.acks.flush(), left, 'last acks');
      } catch (error) {
        this.warnAckFailed(error as Error);
        await this.wake.sleep(Math.min(RETRY_MS, Math.max(0, this.lastAcksBy - performance.now())));
      }
    }
    // NOTE: durable acks: their events wait for their WAIT (at most timeoutMs, counted in lastAcksBy).
    if (this.acks.durable) await withTimeout(this.acks.confirmed(), Math.max(1, this.lastAcksBy - performance.now()), 'last acks').catch(() => undefined);
  }

  private warnAckFailed(error: Error): false {
    reportFailure(this.ctx.logger, '[route] ack', error, `[route p${this.partition}] ack failed, retrying: ${error.message}`);
    return false;
  }

  /** True when no task may start: stopping, lost, handing over or paused. */
  private get halted(): boolean {
    return this.stopping || this.revoking || this.paused;
  }

  /** A take found the queue resumed: tasks may start again. */
  private unpause(): void {
    this.paused = false;
    if (!this.stopping && !this.revoking) this.halt = new AbortController();
  }

  /**
   * Cooperative hand-over: the tasks this runner finished are acked, those it did not start stay in flight,
   * then route-release passes the partition on. True when the runner is done (handed over or fenced).
   */
  private async handOver(): Promise<boolean> {
    try {
      await this.acks.flush();
      if (this.stopping) return true;
      const result = await this.ctx.store.release(this.partition, this.ctx.me, this.epoch);
      if (result !== 'active') return true;
      // NOTE: the scheduler called the hand-over off: go on; the next take returns the batch left in flight.
      this.revoking = false;
      this.halt = new AbortController();
    } catch (error) {
      reportFailure(this.ctx.logger, '[route] hand-over', error, `[route p${this.partition}] hand-over failed, retrying: ${(error as Error).message}`);
      await this.wake.sleep(RETRY_MS);
    }
    return false;
  }

  private async runBatch(raw: string[], replays: number): Promise<void> {
    const chains = new Map<string, RouteItem[]>();
    for (const entry of raw) {
      const item = decodeRouteItem(entry);
      if (!item) {
        const seq = Number(/^(\d+):/.exec(entry)?.[1] ?? -1);
        this.acks.add({ seq, error: errorJson(new CorruptTaskError('ordered task record is unreadable'), 0) });
        continue;
      }
      // NOTE: a replayed batch is one a previous owner took and did not finish (it died or was cut off).
      if (replays > 0) this.events.now(item, 'recovered', replays, {});
      const chain = chains.get(item.key);
      if (chain) chain.push(item);
      else chains.set(item.key, [item]);
    }
    const queue = [...chains.values()];
    const lanes = Math.min(queue.length, this.ctx.store.options.keyConcurrency);
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        for (let chain = queue.shift(); chain; chain = queue.shift()) await this.runChain(chain, replays);
      }),
    );
  }

  /**
   * Runs one key's tasks in order; stops the key at a task that could not finish or start (lost, shutdown,
   * hand-over): it and the rest of the chain stay in flight for whoever runs the partition next.
   */
  private async runChain(chain: RouteItem[], replays: number): Promise<void> {
    for (const item of chain) {
      let outcome = 'stale';
      while (outcome === 'stale') {
        while (!this.halted && !this.ctx.leaseFresh(this.partition)) await this.wake.sleep(RETRY_MS);
        if (this.halted) return;
        outcome = await this.runItem(item, replays);
      }
      if (outcome === 'aborted') return;
      const run = this.starts.get(item.seq);
      if (this.flowViews.delete(item.seq)) {
        const settled = await settleFlowNode(this.ctx, item, outcome, run?.result);
        if (settled === null) return;
        outcome = settled;
      }
      this.starts.delete(item.seq);
      // NOTE: one shape for every settled item (the hot path stays monomorphic).
      const failed = outcome === 'done' ? run?.failed : undefined;
      this.acks.add({
        seq: item.seq, error: outcome === 'done' ? undefined : outcome, startedAt: run?.at, attempt: run?.attempt,
        retried: failed && { ...keptError(failed), stack: stackOf(failed) }, event: this.events.take(item.seq),
      });
    }
  }

  /**
   * Runs a task with its retries; returns 'done', 'aborted' (not finished: left in flight), 'stale' (the
   * claim went stale before it started: wait and try again) or the error json of a task to bury.
   */
  private async runItem(item: RouteItem, replays: number): Promise<string> {
    const worker = this.ctx.workers.get(item.type);
    const slots = this.ctx.slots.get(item.type);
    if (!worker || !slots) return errorJson(new Error(`no ordered @TaskWorker for type "${item.type}" on ${this.ctx.me}`), 0);
    const { maxAttempts, backoff } = worker.options;
    if (this.ctx.flows && FlowProgress.isNode(item.type, item.id) && !this.flowViews.has(item.seq)) {
      const flow = await this.ctx.flows.context(item.id).catch((error: Error) => reportFailure(this.ctx.logger, '[route] flow node', error, `[route p${this.partition}] flow node ${item.id}: ${error.message}`));
      if (!flow) return 'aborted';
      this.flowViews.set(item.seq, flow);
    }
    for (let attempt = 1; ; attempt++) {
      if (!slots.tryAcquire() && !(await slots.acquire(this.halt.signal))) return 'aborted';
      // NOTE: checked again in the same tick as the handler call: a process paused (GC, SIGSTOP) since the
      // chain's check must not start a task under a claim that went stale meanwhile, nor a revoked runner.
      const fresh = this.ctx.leaseFresh(this.partition);
      if (this.halted || !fresh) {
        slots.release();
        return this.halted || attempt > 1 ? 'aborted' : 'stale';
      }
      const failure = await this.attempt(worker, item, attempt + replays, slots);
      if (!failure) return 'done';
      if (this.stopping) return 'aborted';
      const final = attempt >= maxAttempts || isUnrecoverable(failure);
      if (final || !countedInOutage('[route] attempt', failure)) this.ctx.logger.warn?.(failedAttemptLine(`[route p${this.partition}] task ${item.id} (key ${item.key}) attempt ${attempt}`, failure));
      if (final) this.events.later(item, 'dead', attempt + replays, { error: failure });
      else if (!this.halted) this.events.now(item, 'retrying', attempt + replays, { error: failure });
      if (final) return errorJson(failure, attempt);
      const run = this.starts.get(item.seq);
      if (run) run.failed = failure;
      // NOTE: a revoked runner does not retry: the task is handed back with the rest of its chain.
      const until = performance.now() + backoffDelay(backoff, attempt);
      while (!this.halted && performance.now() < until) await this.wake.sleep(until - performance.now());
      if (this.halted) return 'aborted';
    }
  }

  /**
   * One run of the handler with its timeout and abort signal (lost, shutdown); gives its slot back as it
   * settles and resolves with its error, or null when it succeeded. The handler is called synchronously,
   * in the caller's tick.
   */
  private attempt(worker: OrderedWorker, item: RouteItem, attempt: number, slots: Slots): Promise<Error | null> {
    const { timeoutMs } = worker.options;
    return new Promise((resolve) => {
      const controller = runController(worker.handler);
      const startedAt = Date.now();
      this.starts.set(item.seq, { at: startedAt, attempt, failed: attempt > 1 ? this.starts.get(item.seq)?.failed : undefined });
      const settle: Settle = (error, result) => {
        if (!this.running.delete(settle)) return;
        timer.clear();
        slots.release();
        if (!error && item.id.charCodeAt(0) === 38) this.starts.get(item.seq)!.result = result;
        if (error && !(error instanceof LeaseLostError)) this.events.now(item, 'failed', attempt, { error, startedAt });
        else if (!error) this.events.later(item, 'completed', attempt, { result, startedAt });
        resolve(error);
      };
      const timer = this.ctx.timeouts.get(item.type)!.add(() => this.abortRun(settle, new TaskTimeoutError(timeoutMs)));
      this.running.set(settle, { id: item.id, controller });
      callHandler(worker.handler, this.view(item, attempt), controller, settle);
    });
  }

  /**
   * Aborts a running attempt and settles it with `reason` at once.
   * NOTE: settled here rather than by an 'abort' listener on its signal: one listener per task was a
   * measurable share of the hot path.
   */
  private abortRun(run: Settle, reason: unknown): void {
    if (!this.running.has(run)) return;
    this.running.get(run)?.controller?.abort(reason);
    run(toError(reason));
  }

  /** The task as its handler gets it. */
  private view(item: RouteItem, attempt: number): OrderedTask {
    const { id, type, key, payload, at: dueAt, traceContext } = item;
    const view = new OrderedTask(id, type, key, payload, attempt, dueAt, { partition: this.partition, epoch: this.epoch }, traceContext);
    const flow = id.charCodeAt(0) === 38 ? this.flowViews.get(item.seq) : undefined;
    if (flow) view.flow = flow;
    return view;
  }
}
