import type { LoggerService } from '@nestjs/common';
import { DeliveryNotMadeError, LeaseLostError, RateLimitedError, TaskCancelledError, TaskTimeoutError } from '../errors';
import type { TaskHandler } from '../interfaces';
import type { ResolvedWorkerOptions } from '../options/resolve-options';
import { ACK_DELAY_MS } from '../runtime/ack-buffer';
import { runController } from '../runtime/handler-call';
import { SHUTDOWN_CALL_MS, shutdownCall, stopWithGrace } from '../runtime/graceful-stop';
import { newRequestId } from '../runtime/request-id';
import { ReservedQueue, type Held } from './reserved-queue';
import { heldOf, newBatch, startRun, type Batch, type RunningTask } from './running-task';
import { IdleWaiters } from '../runtime/idle-waiters';
import { WakeSignal } from '../runtime/wake-signal';
import type { DelayQueueStore, Reservation, TakeResult } from './delay-queue.store';
import type { TaskEventBus } from '../events/task-event-bus';
import { ConsumerEvents } from './consumer-events';
import { DelayAcks, type AckBatch } from './delay-acks';
import { reportFailure } from '../redis/outage-log';
import type { AckDurability } from '../redis/ack-durability';
import { DurableAcks } from './durable-acks';
import { ConsumerFlows } from './consumer-flows';
import type { FlowProgress } from '../flow/flow-progress';
import { TaskOutcomes } from './task-outcomes';
import { renewEveryMs, renewTick } from './lease-renewal';
import { pauseForRateLimit } from '../events/rate-limited';
import { ERROR_BACKOFF_MS, HAND_BACK_MS, MAX_FETCHES, RECOVER_LIMIT, type DoneOptions } from './consumer-bounds';
import { TaskReports } from './task-reports';
import type { ActiveTaskClass } from '../runtime/active-task';

/**
 * Runs the tasks of one type in this process: at most `concurrency` at a time, acks batched into the next
 * fetch (at once when nothing else runs), leases renewed while handlers run. While handlers are quick it reserves more than its slots
 * (`ReservedQueue`, `PrefetchAllowance`), which start as slots free: fewer, larger takes.
 *
 * It fetches when it may have work: after a full batch, on a timer to the next due time, on a wake-up
 * message, and on its own safety poll. No single signal is relied on.
 */
export class TaskConsumer {
  private readonly running = new Map<string, RunningTask>();
  /** Reserved tasks waiting for a slot. */
  private readonly queued: ReservedQueue;
  private readonly events: ConsumerEvents;
  private readonly acks: DelayAcks;
  /** What running tasks report (`task.progress`, `task.log`), and the class of the tasks handlers get. */
  private readonly reports: TaskReports;
  private readonly View: ActiveTaskClass;
  /** With the module option `durability`: the acks, apart from the takes (see `DurableAcks`). */
  private readonly durableAcks?: DurableAcks;
  /** Flow nodes' hooks (absent without Redis). */
  private readonly flows?: ConsumerFlows;
  /** What becomes of a settled task (its ack, or its failure recorded). */
  private readonly outcomes: TaskOutcomes;
  /** Tasks being settled (failures being written, acks waiting on reports or flows): their slots stay taken. */
  private settling = 0;
  private mayHaveWork = true;
  /** The last take was held back by the type's fleet-wide concurrency (see `afterSlotFreed`). */
  private fleetBound = false;
  /**
   * The last take found more due tasks than it reserved: a second take may go out while the first is in
   * flight (else, with handlers done before the next pump, only one take would ever be in flight and Redis
   * and this process would wait on each other in turn).
   */
  private backlog = false;
  /** take calls in flight, and the slots they asked for. */
  private fetches = 0; private requested = 0;
  private pumpQueued = false;
  private stopping = false;
  private readonly wake = new WakeSignal(() => this.poll());
  private errorTimer?: NodeJS.Timeout;
  private ackTimer?: NodeJS.Timeout;
  /** Acks have waited `ACK_DELAY_MS` (or nothing else runs): the next pump sends them even without a take. */
  private acksDue = false;
  private timers: NodeJS.Timeout[] = [];
  /** Callers waiting until nothing runs, waits, settles or fetches. */
  private readonly idle = new IdleWaiters(() => this.busy === 0 && this.fetches === 0);
  /** Names this consumer's request keys in Redis. */
  private readonly consumerId = newRequestId();
  /** Request keys (`<consumer id>.<lane>`), one per take in flight: a re-sent take finds its own reply. */
  private readonly freeLanes = Array.from({ length: MAX_FETCHES }, (_, lane) => lane);
  /** Failed takes that asked for tasks: retried under the same request id and lane. */
  private readonly retries: { lane: number; requestId: string }[] = [];
  /** When a take or a lease renewal last succeeded (epoch ms): health checks read it. */
  lastContactAt = Date.now();

  constructor(
    readonly type: string,
    private readonly handler: TaskHandler,
    readonly options: ResolvedWorkerOptions,
    private readonly store: DelayQueueStore,
    private readonly done: DoneOptions,
    private readonly logger: LoggerService,
    bus?: TaskEventBus,
    durability?: AckDurability | null,
    flows?: FlowProgress | null,
  ) {
    // NOTE: schedules' types never hold flow nodes (the route's delay type does: ordered ones).
    if (flows && !type.startsWith('__cron__')) this.flows = new ConsumerFlows(type, flows, logger);
    this.events = new ConsumerEvents(type, bus);
    this.acks = new DelayAcks(this.events, done.maxResultBytes);
    this.reports = new TaskReports(type, store.reports, { maxProgressBytes: done.maxProgressBytes, ...done.taskLogs }, this.events, logger);
    this.View = this.reports.viewClass((id) => this.running.get(id));
    if (durability) this.durableAcks = new DurableAcks(type, durability, this.events, this.takeOptions(0), `${this.consumerId}.0`, logger, ERROR_BACKOFF_MS, done.maxResultBytes);
    const slots = { hold: () => void this.settling++, release: () => void this.settling--, freed: () => this.afterSlotFreed() };
    this.outcomes = new TaskOutcomes(type, store, options, this.events, logger, this.acks, this.durableAcks, this.flows, slots);
    this.queued = new ReservedQueue(options.concurrency, (stalled, ms) => {
      this.logger.debug?.(`[${this.type}] no slot freed for ${ms} ms: ${stalled.length} task(s) reserved ahead handed back`);
      this.handBack(stalled);
    });
  }

  /** Starts fetching, the safety poll and lease renewal (which records this consumer's presence at once). */
  start(): void {
    this.timers = [
      setInterval(() => this.poll(), this.options.pollIntervalMs),
      setInterval(() => void this.renewLeases(), this.renewEveryMs),
    ];
    void this.renewLeases();
    this.poll();
  }

  /** Safety poll and reconnect hook: look for due tasks now. */
  poll(): void {
    this.mayHaveWork = true;
    this.schedulePump();
  }

  /** Handles a message of the type's events channel. */
  onEvent(message: string): void {
    if (message.startsWith('w:')) {
      if (!this.stopping) this.wake.wakeIn(Number(message.slice(2)));
    } else if (message.startsWith('c:')) {
      this.abortRunning(message.slice(2), new TaskCancelledError(message.slice(2)));
    }
  }

  /** Records this consumer as live (every tick), renews the leases of the tasks it holds; aborts those lost. */
  async renewLeases(): Promise<void> {
    const held = [...this.unfinished().map(heldOf), ...this.queued.held()];
    const lost = await renewTick(this.type, this.consumerId, this.options, this.store, this.flows, this.logger, held);
    if (lost === null) return;
    this.lastContactAt = Date.now();
    for (const id of lost) this.abortRunning(id, new LeaseLostError(id));
  }

  /** How often leases are renewed: a third of the visibility timeout. */
  get renewEveryMs(): number {
    return renewEveryMs(this.options);
  }

  /** Running tasks whose outcome is not settled yet. */
  private unfinished(): RunningTask[] {
    return [...this.running.values()].filter((t) => !t.settled);
  }

  /** Number of tasks this consumer holds (running, waiting for a slot or being settled). */
  get busy(): number {
    return this.running.size + this.settling + this.queued.size;
  }

  /**
   * Stops fetching, waits up to `timeoutMs` for running tasks, then aborts the rest and hands them back
   * without counting an attempt. Leases stay renewed while it waits.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    const waiting = this.queued.drain();
    if (waiting.length > 0) this.handBack(waiting);
    this.wake.close();
    clearTimeout(this.errorTimer);
    clearTimeout(this.ackTimer);
    clearInterval(this.timers[0]);
    await stopWithGrace(this.idle.whenIdle(), timeoutMs, (reason) => {
      const unfinished = this.unfinished();
      for (const task of unfinished) this.settle(task);
      for (const task of unfinished) task.controller?.abort(reason);
      if (unfinished.length > 0) this.handBack(unfinished.map(heldOf), false, Promise.all(unfinished.map((t) => t.reportsSent)));
    });
    await this.idle.waitIdle(HAND_BACK_MS);
    this.timers.forEach(clearInterval);
    await shutdownCall(this.store.leavePresence(this.type, this.consumerId), 'leaving').catch(() => undefined);
    await shutdownCall(this.reports.flush(), 'last reports').catch(() => undefined);
    try {
      if (this.acks.size > 0) await shutdownCall(this.flushAcks(), 'last acks');
      // NOTE: the call's bound, and the WAIT's own (timeoutMs): bounded, as every step of a stop.
      if (this.durableAcks) await shutdownCall(this.durableAcks.flush(), 'last acks', SHUTDOWN_CALL_MS + this.durableAcks.timeoutMs);
    } catch (error) {
      reportFailure(this.logger, `[${this.type}] last acks`, error, `[${this.type}] last acks failed (their leases will expire): ${(error as Error).message}`);
    }
    this.durableAcks?.close();
  }

  /**
   * Releases reservations (no attempt counted); `thenTake`: look for work again once released; `first`: calls
   * made before (a fleet-wide pause, the attempts' last reports), whose failure is reported and does not keep
   * the release back.
   */
  private handBack(held: Held[], thenTake = false, first: Promise<unknown> = Promise.resolve()): void {
    this.settling++;
    first
      .catch((error: Error) => reportFailure(this.logger, `[${this.type}] rate-limit pause`, error))
      .then(() => this.store.release(this.type, held))
      .catch((error: Error) => reportFailure(this.logger, `[${this.type}] hand-back`, error, `[${this.type}] hand-back failed (leases will expire): ${error.message}`))
      .finally(() => {
        this.settling--;
        if (thenTake && !this.stopping) this.schedulePump();
        this.idle.check();
      });
  }

  private schedulePump(): void {
    if (this.pumpQueued) return;
    this.pumpQueued = true;
    setImmediate(() => {
      this.pumpQueued = false;
      this.startQueued();
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.fetches >= MAX_FETCHES || this.errorTimer) return;
    // NOTE: slots asked for by a take in flight are taken already: never reserve past capacity.
    const capacity = this.capacity;
    const free = this.stopping ? 0 : capacity - this.busy - this.requested;
    // NOTE: each take asks for at most half the slots, so that two takes alternate: Redis runs one while
    // this process starts the tasks of the other.
    const half = Math.ceil(capacity / MAX_FETCHES);
    let want = (this.mayHaveWork || this.backlog) && free > 0 ? Math.min(free, half) : 0;
    if (this.fetches > 0 && want < half) want = 0;
    if (want === 0 && (this.acks.size === 0 || this.fetches > 0)) return;
    // NOTE: acks wait ACK_DELAY_MS for a batch; with nothing else running here, none comes: they go at once.
    if (want === 0 && !this.acksDue && !this.stopping && this.busy > 0) {
      this.ackTimer ??= setTimeout(() => {
        this.ackTimer = undefined;
        this.acksDue = true;
        this.schedulePump();
      }, ACK_DELAY_MS);
      return;
    }
    this.acksDue = false;
    const acks = this.acks.drain();
    this.fetches++;
    this.requested += want;
    if (want > 0) this.mayHaveWork = false;
    // NOTE: a take that failed may have reserved tasks in Redis all the same (its reply lost): asked again
    // under the same request id, Redis returns those reservations instead of leaving them orphaned.
    const { lane, requestId } = want > 0 ? (this.retries.shift() ?? { lane: this.freeLanes.shift() ?? 0, requestId: newRequestId() }) : { lane: 0, requestId: '' };
    let result: TakeResult | undefined;
    try {
      const taking = this.store.take(this.type, this.takeOptions(want), acks.held, `${this.consumerId}.${lane}`, requestId);
      if (want > 0 && this.backlog && this.fetches < MAX_FETCHES) this.schedulePump();
      result = await taking;
      this.lastContactAt = Date.now();
      if (want > 0) this.freeLanes.push(lane);
    } catch (error) {
      this.acks.restore(acks);
      if (want > 0) {
        this.mayHaveWork = true;
        this.retries.push({ lane, requestId });
      }
      reportFailure(this.logger, `[${this.type}] fetch`, error, `[${this.type}] fetch failed, retrying: ${(error as Error).message}`);
      this.errorTimer ??= setTimeout(() => {
        this.errorTimer = undefined;
        this.schedulePump();
      }, ERROR_BACKOFF_MS);
    } finally {
      this.fetches--;
      this.requested -= want;
    }
    if (result) this.accept(result, want, acks);
    if (this.acks.size > 0 || (this.mayHaveWork && this.capacity > this.busy + this.requested)) this.schedulePump();
    this.idle.check();
  }

  /** A take's reply: its acks are in Redis (their completions are announced), its reservations run. */
  private accept(result: TakeResult, want: number, acks: AckBatch): void {
    this.acks.sent(acks, result.refused);
    if (result.refused.length > 0) this.logger.debug?.(`[${this.type}] ${result.refused.length} ack(s) refused: reservation expired`);
    if (want > 0) this.backlog = result.nextDueIn === 0;
    if (want > 0) this.fleetBound = result.nextDueIn === -2;
    if (want > 0 && result.nextDueIn === 0) this.mayHaveWork = true;
    else if (want > 0 && result.nextDueIn > 0 && !this.stopping) this.wake.wakeIn(result.nextDueIn);
    if (this.stopping && result.reserved.length > 0) {
      this.handBack(result.reserved.map((r): Held => [r.id, r.token]));
    } else {
      this.runBatch(result.reserved);
    }
  }

  /** Tasks this consumer may hold: its slots, and those it may reserve ahead while handlers are quick. */
  private get capacity(): number {
    return this.options.concurrency + this.queued.extra;
  }

  private takeOptions(count: number) {
    const { visibilityTimeoutMs: leaseMs, maxAttempts } = this.options;
    return { count, leaseMs, maxAttempts, keepDone: this.done.keepDone, recoverLimit: RECOVER_LIMIT };
  }

  private flushAcks(): Promise<unknown> {
    return this.acks.send((held) => this.store.take(this.type, this.takeOptions(0), held, `${this.consumerId}.0`, ''));
  }

  private runBatch(reservations: Reservation[]): void {
    this.queued.push(reservations);
    this.startQueued();
  }

  /** Starts the reserved tasks there are free slots for. */
  private startQueued(): void {
    const free = this.options.concurrency - this.running.size - this.settling;
    if (free <= 0 || this.queued.size === 0) return;
    const reservations = this.queued.shift(free);
    const { timeoutMs } = this.options;
    const batch = newBatch(timeoutMs, (task) => this.finish(task, new TaskTimeoutError(timeoutMs)));
    for (const reservation of reservations) this.run(reservation, batch);
  }

  /** A reserved task from now on held as running (its handler about to start, or its outcome recorded). */
  private track(reservation: Reservation, batch: Batch, controller?: AbortController): RunningTask {
    const task: RunningTask = { reservation, controller, batch, settled: false, startedAt: Date.now() };
    batch.tasks.add(task);
    this.running.set(reservation.id, task);
    return task;
  }

  private run(reservation: Reservation, batch: Batch): void {
    const task = this.track(reservation, batch, runController(this.handler));
    startRun(this.type, this.handler, task, this.flows, this.View, (error, result) => {
      this.queued.recordDuration(Date.now() - task.startedAt);
      this.finish(task, error, result);
    }, (error) => this.finish(task, error));
  }

  /**
   * Marks a task settled: its handler's outcome no longer matters; its last reports go before the call that
   * ends it (`succeeded`: in a microtask, before its ack). Returns false when it was already.
   */
  private settle(task: RunningTask, succeeded = false): boolean {
    if (task.settled) return false;
    task.settled = true;
    task.reportsSent = this.reports.ended(task, !succeeded);
    task.batch.tasks.delete(task);
    if (task.batch.tasks.size === 0) task.batch.timer?.clear();
    this.running.delete(task.reservation.id);
    return true;
  }

  /** Ends a task this consumer holds: a lost one is let go; otherwise the failure is recorded. */
  private abortRunning(id: string, reason: Error): void {
    const waiting = this.queued.remove(id);
    // NOTE: a task waiting for a slot never starts: it settles as a running one does
    const task = waiting ? this.track(waiting, { tasks: new Set() }) : this.running.get(id);
    if (!task || task.settled) return;
    if (reason instanceof LeaseLostError) {
      this.settle(task);
      task.controller?.abort(reason);
      this.logger.warn?.(`[${this.type}] ${reason.message}`);
      this.afterSlotFreed();
      return;
    }
    this.finish(task, reason);
  }

  /**
   * A task's outcome: a success is acked with the next fetch (announced once Redis has it); a failure is
   * recorded at once (see `TaskOutcomes`); a hand-back when no instance ran it or it hit a rate limit.
   */
  private finish(task: RunningTask, error: Error | null, result?: unknown): void {
    if (!this.settle(task, !error)) return;
    if (!error) return this.outcomes.succeeded(task, result);
    // NOTE: service mode: no instance ran the task to an end of its own (see DeliveryNotMadeError); the task
    // goes back to its place, no attempt spent.
    // NOTE: a hand-back after the attempt's last reports (the release ends the reservation they are checked against)
    if (error instanceof DeliveryNotMadeError) this.handBack([heldOf(task)], true, task.reportsSent);
    else if (error instanceof RateLimitedError) this.handBack([heldOf(task)], true, Promise.all([task.reportsSent, pauseForRateLimit(this.type, this.store.limits, this.events, task, error)]));
    else void this.outcomes.failed(task, error);
  }

  private afterSlotFreed(): void {
    // NOTE: held back by the fleet's concurrency: the slot this task frees is taken with its ack, at once.
    if (this.fleetBound) this.mayHaveWork = true;
    this.schedulePump();
    this.idle.check();
  }
}
