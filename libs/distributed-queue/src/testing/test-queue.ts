import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { TaskScheduleService } from '../cron/task-schedule.service';
import { TaskSubmitService } from '../services/task-submit.service';
import { routeDelayType } from '../distributed-queue.constants';
import { mergeWorkerOptions } from '../options/resolve-options';
import type { Task, TaskInfo, TaskState } from '../interfaces';
import { TaskInspectorService } from '../services/task-inspector.service';
import type { MoverPayload } from '../route/route-producer';
import { MemoryRouteStore } from './memory-route-store';
import { MemoryOrderedRunner } from './memory-ordered-runner';
import { MemoryCron } from './memory-cron';
import type { MemoryFlowProgress } from './memory-flow-progress';
import type { MemoryFlowStore } from './memory-flow-store';
import type { MemoryCronStore } from './memory-cron-store';
import { DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import { DistributedQueueExplorer, type DiscoveredWorker } from '../distributed-queue.explorer';
import { checkedTypeOf, type TaskContract } from '../contracts/task-contract';
import { InvalidArgumentError, TaskTimeoutError, UnknownTaskTypeError } from '../errors';
import { TaskEventBus } from '../events/task-event-bus';
import { TaskEventExplorer } from '../events/task-event.explorer';
import { encodePayload } from '../delay/task-codec';
import { EventSubscriber } from '../runtime/event-subscriber';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { callHandler, runController } from '../runtime/handler-call';
import { OrderedTask, UnkeptTask } from '../runtime/active-task';
import { partitionOf } from '../route/route-keys';
import { checkKey } from '../services/task-input';
import { MemoryEngine, type SubmittedTask } from './memory-engine';
import type { MemoryEventSubscriber } from './memory-event-subscriber';
import { MemoryLimits } from './memory-limits';
import { MemoryGroups } from './memory-groups';
import { MemoryRunner } from './memory-runner';
import { assertSubmitted, type PayloadMatcher } from './submitted-matcher';
import { epochMs, TestClock } from './test-clock';
import type { ResolvedTestingOptions } from './testing-options';
import { AutoRun } from './auto-run';

/** The testing options' injection token. */
export const TESTING_OPTIONS = Symbol('DISTRIBUTED_QUEUE_TESTING_OPTIONS');

/** Runs without an end in sight: `drain`'s default bound. */
const DEFAULT_MAX_TASKS = 10_000;

/** Options of `TestQueue.runTask`. */
export interface RunTaskOptions {
  /** The task's id. @default 'test' */
  id?: string;
  /** The attempt the handler sees (1 for the first run). @default 1 */
  attempt?: number;
  /** The due time the handler sees (epoch ms). @default the test clock's now */
  dueAt?: number;
  /** An ordered worker's task: its key (`task.key`; `task.fence` is its partition's, epoch 1). @default 'test' */
  key?: string;
}

/**
 * The test's handle on the in-memory engine of `DistributedQueueTestingModule`: moves its clock, runs due
 * tasks, and tells what was submitted. Inject it, or `moduleRef.get(TestQueue)`.
 */
@Injectable()
export class TestQueue implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  /** @internal the engine the module's stores answer from */
  readonly engine: MemoryEngine;
  /** @internal */
  readonly limits: MemoryLimits;
  /** @internal */
  readonly groups: MemoryGroups;
  private readonly runner: MemoryRunner;
  private readonly auto?: AutoRun;
  private readonly clock: TestClock;
  private started = false;
  private readonly cron: MemoryCron;
  private flows?: MemoryFlowProgress;
  /** @internal the route queue (with the module's `route` option) */
  readonly route?: MemoryRouteStore;
  /** The internal worker moving due delayed ordered tasks into their partition. */
  private readonly mover?: DiscoveredWorker;

  /** @internal `DistributedQueueTestingModule` provides it: get it from the testing module, do not construct it. */
  constructor(
    @Inject(TESTING_OPTIONS) private readonly testing: ResolvedTestingOptions,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    private readonly explorer: DistributedQueueExplorer,
    private readonly bus: TaskEventBus,
    @Inject(EventSubscriber) subscriber: MemoryEventSubscriber,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly moduleRef: ModuleRef,
  ) {
    this.cron = new MemoryCron(options, () => moduleRef.get(TaskScheduleService, { strict: false }));
    this.clock = new TestClock(testing.run, testing.now);
    const workerOf = (type: string): DiscoveredWorker | undefined => this.explorer.getWorkers().find((w) => w.type === type);
    const settings = (type: string): { defaultPriority?: number; agingMs?: number } => {
      const o = workerOf(type)?.options ?? this.options.types[type] ?? {};
      return { defaultPriority: o.defaultPriority, agingMs: o.agingMs };
    };
    this.engine = new MemoryEngine(this.clock, options.keyPrefix, options.keepDone, bus, subscriber, settings);
    this.limits = new MemoryLimits(this.engine, workerOf);
    this.groups = new MemoryGroups(this.engine);
    this.runner = new MemoryRunner(this.engine, () => this.workers(), this.limits, this.groups, bus, options);
    if (options.route) {
      this.route = new MemoryRouteStore(options.route, this.clock, () => this.engine.changed(), (item) => this.engine.recordOrdered(item));
      this.runner.ordered = new MemoryOrderedRunner(this.route, () => this.workers(), bus);
      this.mover = this.moverWorker(options.route.qId, () => moduleRef.get(TaskSubmitService, { strict: false }));
    }
    if (testing.run === 'auto') this.auto = new AutoRun(this.engine, this.runner, this.clock);
  }

  /** Nest lifecycle hook: discovers the workers and event listeners. */
  onModuleInit(): void {
    this.start();
  }

  /** Nest lifecycle hook: declares the `@DistributedCron` schedules and, in `run: 'auto'` mode, starts running what falls due. */
  async onApplicationBootstrap(): Promise<void> {
    await this.ready();
    this.auto?.start();
  }

  /** Nest lifecycle hook: stops auto mode and every running attempt, as shutdown does (their signals abort). */
  onApplicationShutdown(): void {
    this.auto?.stop();
    this.runner.stopAll();
  }

  /** The test clock's time (epoch ms): what the engine calls now. */
  now(): number {
    return this.clock.now();
  }

  /**
   * Moves the clock `ms` forward, running on the way every task that falls due, each at its due time (a
   * retry's backoff, a task a handler submits with a delay): resolves with the attempts run. Whole ms, as Redis's
   * clock: a fraction of a ms is dropped.
   * @throws InvalidArgumentError for a negative or non-finite `ms`
   */
  async advanceBy(ms: number): Promise<number> {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) throw new InvalidArgumentError('ms', `must be a finite number from 0, got ${String(ms)}`);
    // NOTE: whole ms, as Redis's clock: a fractional clock made the ordered tasks' records unreadable
    return this.runUntil(this.clock.now() + Math.floor(ms));
  }

  /** Moves the clock to `time` (never back), running what falls due on the way, as `advanceBy` does. */
  async setTime(time: number | Date): Promise<number> {
    return this.runUntil(Math.max(epochMs('time', time), this.clock.now()));
  }

  /**
   * Runs every task due now, and those that fall due now while they run, waiting for each attempt to end;
   * resolves with the attempts run (of delay and ordered tasks, `@DistributedCron` runs included; not the
   * library's own schedule ticks and moves). Does not move the clock: a retry after a backoff waits for it.
   */
  async runDue(): Promise<number> {
    await this.ready();
    return this.runner.runDue();
  }

  /**
   * Runs until no task of a type with a worker waits: due ones now, later ones by moving the clock to their
   * due time. Resolves with the attempts run.
   * @default maxTasks 10000
   * @throws Error when more than `maxTasks` attempts ran (a task that keeps submitting another, a schedule);
   * InvalidArgumentError for options that are not `{ maxTasks? }` with a positive integer
   */
  async drain(options: { maxTasks?: number } = {}): Promise<number> {
    if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options', 'must be { maxTasks? }');
    const { maxTasks = DEFAULT_MAX_TASKS } = options;
    if (!Number.isInteger(maxTasks) || maxTasks < 1) throw new InvalidArgumentError('maxTasks', `must be a positive integer, got ${String(maxTasks)}`);
    await this.ready();
    let ran = 0;
    for (;;) {
      ran += await this.runner.runDue();
      if (ran > maxTasks) throw new Error(`drain() ran ${ran} attempts, more than maxTasks (${maxTasks}): something keeps submitting tasks`);
      // NOTE: a schedule always has a next tick: the ticks due on the way run, but do not keep drain going
      if (this.runner.nextDueAt(true) === null) return ran;
      this.clock.moveTo(this.runner.nextDueAt()!);
    }
  }

  /** Auto mode: resolves once nothing runs and nothing is due (at once in manual mode). */
  async idle(): Promise<void> {
    if (!this.auto) return;
    await this.auto.idle();
  }

  /** Every task submitted (created, not deduplicated) since the start or the last `reset`, oldest first; of `type` when given. */
  getSubmitted<P = unknown>(type?: string | TaskContract<P, boolean>): SubmittedTask<P>[] {
    const name = type === undefined ? undefined : this.knownType(type);
    return this.engine.submitted.filter((t) => name === undefined || t.type === name) as SubmittedTask<P>[];
  }

  /**
   * Asserts that a task of `type` was submitted whose payload matches `matcher` (a partial object, compared
   * deeply, where Jest's asymmetric matchers work; or a predicate); with `times`, exactly that many.
   * @throws AssertionError naming what was submitted; UnknownTaskTypeError for a type this application does
   * not know (`strictTypes`)
   */
  expectSubmitted<P = unknown>(type: string | TaskContract<P, boolean>, matcher?: PayloadMatcher<P>, times?: number): void {
    assertSubmitted(checkedTypeOf(type), this.getSubmitted<P>(type), matcher, times);
  }

  /** Asserts that no task of `type` whose payload matches `matcher` was submitted. @throws AssertionError, UnknownTaskTypeError */
  expectNotSubmitted<P = unknown>(type: string | TaskContract<P, boolean>, matcher?: PayloadMatcher<P>): void {
    assertSubmitted(checkedTypeOf(type), this.getSubmitted<P>(type), matcher, 0);
  }

  /**
   * Calls the worker of `type` with a task of `payload` as the engine would (the payload through JSON, an
   * `ActiveTask` whose progress and log are checked, the type's timeout aborting its signal), without
   * queueing anything: resolves with what the handler returned, rejects with what it threw.
   * @throws UnknownTaskTypeError when no worker here handles `type`; InvalidPayloadError; TaskTimeoutError
   */
  async runTask<R = unknown, P = unknown>(type: string | TaskContract<P, boolean>, payload: NoInfer<P>, options: RunTaskOptions = {}): Promise<R> {
    this.start();
    const name = checkedTypeOf(type);
    const worker = this.workers().find((w) => w.type === name);
    if (!worker) throw new UnknownTaskTypeError(name);
    const json = encodePayload(payload, this.options.maxPayloadBytes);
    const { id = 'test', attempt = 1, dueAt = this.clock.now(), key } = options ?? {};
    if (key !== undefined && !worker.options.ordered) throw new InvalidArgumentError('key', `"${name}" is not ordered: its tasks have no key`);
    if (key !== undefined) checkKey(key, 0);
    const payloadValue = JSON.parse(json) as unknown;
    const task = worker.options.ordered
      ? new OrderedTask(id, name, key ?? 'test', payloadValue, attempt, dueAt, { partition: partitionOf(key ?? 'test', this.options.route?.partitions ?? 1), epoch: 1 })
      : new UnkeptTask(id, name, payloadValue, attempt, dueAt);
    const controller = runController(worker.handler);
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => settle(new TaskTimeoutError(worker.options.timeoutMs)), worker.options.timeoutMs);
      timer.unref?.();
      let settled = false;
      const settle = (error: Error | null, result?: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) {
          controller?.abort(error);
          reject(error);
        } else resolve(result as R);
      };
      callHandler(worker.handler, task, controller, settle);
    });
  }

  /** A task's state and record, as `TaskInspectorService.getTask` gives them. */
  getTask<P = unknown>(type: string | TaskContract<P>, id: string): Promise<TaskInfo<P>> {
    return this.moduleRef.get(TaskInspectorService, { strict: false }).getTask<P>(type, id);
  }

  /** A task's state (`delayed`, `ready`, `running`, `done`, `dead`, `pending`, `unknown`), as `getState` gives it. */
  getState(type: string | TaskContract<unknown>, id: string): Promise<TaskState> {
    return this.moduleRef.get(TaskInspectorService, { strict: false }).getState(type, id);
  }

  /**
   * Forgets every task (ordered ones too), dead letter, flow, submit record and run-time setting (pauses,
   * group settings, limit overrides), as a fresh Redis would; the workers and schedules stay.
   */
  reset(): void {
    this.engine.clear();
    this.route?.clear();
    this.groups.clear();
    this.limits.clear();
    (this.flows?.store as MemoryFlowStore | undefined)?.clear();
    // NOTE: the schedules stay: their tick tasks went with the rest, so their chains start again from now
    (this.moduleRef.get(TaskScheduleService, { strict: false }).store as MemoryCronStore).rearm();
  }

  /** @internal Flows' progress: the runners tell it of nodes; reset clears its store. */
  useFlows(progress: MemoryFlowProgress): MemoryFlowProgress {
    this.flows = progress;
    this.runner.flows = progress;
    if (this.runner.ordered) this.runner.ordered.flows = progress;
    return progress;
  }

  /** @internal The types of the workers here (the library's own included). */
  workerTypes(): string[] {
    return this.workers().map((w) => w.type);
  }

  /** @internal Whether a worker here runs `type`. */
  hasWorker(type: string): boolean {
    this.start();
    return this.workers().some((w) => w.type === type);
  }

  /**
   * A type to look for, checked: under `strictTypes` (the default) one this application knows, so that a
   * misspelt type fails rather than passing `expectNotSubmitted`. @throws UnknownTaskTypeError
   */
  private knownType(type: string | TaskContract<unknown, boolean>): string {
    const name = checkedTypeOf(type);
    if (this.options.strictTypes && !this.explorer.isKnown(name)) throw new UnknownTaskTypeError(name);
    return name;
  }

  /** The discovered workers (after the module's init; found at first use when the test did not init it). */
  private workers(): DiscoveredWorker[] {
    const workers = this.explorer.getWorkers();
    const movers = this.mover && workers.some((w) => w.options.ordered) ? [this.mover] : [];
    return [...workers, ...this.cron.workers(), ...movers];
  }

  /** The mover of delayed ordered tasks, as the real orchestrator makes it. */
  private moverWorker(qId: string, submit: () => TaskSubmitService): DiscoveredWorker {
    const options = mergeWorkerOptions(this.options.defaults, { concurrency: 10 });
    const handler = { handle: (task: Task<MoverPayload>) => submit().enqueueDueOrdered(task.id, task.payload, task.dueAt, options.visibilityTimeoutMs) };
    return { type: routeDelayType(qId), className: 'DelayedOrderedMover', handler, options };
  }

  /** Discovers workers and listeners once (Nest's init does it; a test that did not init gets it here). */
  private start(): void {
    if (this.started) return;
    this.started = true;
    this.explorer.onModuleInit();
    new TaskEventExplorer(this.discovery, this.scanner, this.bus).onModuleInit();
    this.cron.discover(this.discovery, this.scanner);
  }

  /** Started, and the `@DistributedCron` schedules declared. */
  private async ready(): Promise<void> {
    this.start();
    await this.cron.declare();
  }

  /** Runs what falls due until `target`, each at its time, then sets the clock to `target`. */
  private async runUntil(target: number): Promise<number> {
    await this.ready();
    let ran = await this.runner.runDue();
    for (;;) {
      const next = this.runner.nextDueAt();
      if (next === null || next > target) break;
      this.clock.moveTo(next);
      ran += await this.runner.runDue();
    }
    this.clock.moveTo(target);
    return ran + (await this.runner.runDue());
  }
}
