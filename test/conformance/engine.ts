/**
 * The conformance suite's harness: the same spec files (test/conformance/*.e2e-spec.ts) run against every
 * engine of the library's public API, so that the in-memory engine of `DistributedQueueTestingModule` and the
 * real engine on Redis (single server, cluster) cannot drift apart.
 *
 * A case talks to an `Engine` only: the four public services, `advance` (let time pass) and `settle` (let
 * what is due now run to an end). It never reads Redis keys and never assumes real time passes other than
 * through `advance`: the memory engine's clock stands still between calls.
 *
 * Engines: the memory engine (test/conformance/engine-memory.ts, exporting `memoryEngine`) when that file
 * exists, and the Redis targets of `getTargets()` (DQ_TEST_TARGETS). `DQ_CONFORMANCE_ENGINES` (comma
 * separated: memory, single, cluster; default all) narrows the run further, e.g. to the memory engine alone.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { Type } from '@nestjs/common';
import type {
  DistributedQueueModuleOptions, QueueControlService, TaskInspectorService, TaskScheduleService, TaskSubmitService,
} from 'nestjs-distributed-queue';
import { getTargets } from '../support/targets';
import { redisEngine } from './engine-redis';

export type EngineName = 'memory' | 'single' | 'cluster';

/** Module options an engine starts with: everything but where Redis is. */
export type EngineOptions = Omit<DistributedQueueModuleOptions, 'connection' | 'keyPrefix'>;

export interface Engine {
  name: EngineName;
  submit: TaskSubmitService;
  inspect: TaskInspectorService;
  control: QueueControlService;
  schedules: TaskScheduleService;
  /**
   * Lets `ms` pass: the memory engine moves its clock and runs what falls due; Redis waits `ms` of real
   * time, then settles every type this engine knows (`inspect.listTypes()`).
   */
  advance(ms: number): Promise<void>;
  /**
   * Returns once every task due now of the given types has run to an end of its attempt (done, dead, or
   * waiting for a retry) and nothing of them runs. A paused type's waiting tasks are not waited for (only its
   * running ones). Memory runs them; Redis polls `getCounts` until ready and running are 0 (a paused type:
   * running), bounded (10 s, then it throws with the counts).
   */
  settle(types: string[]): Promise<void>;
  close(): Promise<void>;
}

export interface EngineFactory {
  name: EngineName;
  start(options: EngineOptions, workers: Type<unknown>[]): Promise<Engine>;
}

/** Starts an engine of the suite's current factory; it is closed after the test. */
export type StartEngine = (options?: EngineOptions, workers?: Type<unknown>[]) => Promise<Engine>;

const ALL_ENGINES: EngineName[] = ['memory', 'single', 'cluster'];

/** Engines named by DQ_CONFORMANCE_ENGINES (default: all). */
function wantedEngines(): EngineName[] {
  const raw = process.env.DQ_CONFORMANCE_ENGINES?.trim();
  if (!raw) return ALL_ENGINES;
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = names.filter((n) => !ALL_ENGINES.includes(n as EngineName));
  if (bad.length > 0) throw new Error(`DQ_CONFORMANCE_ENGINES: unknown engine(s) ${bad.join(', ')} (known: ${ALL_ENGINES.join(', ')})`);
  return names as EngineName[];
}

/**
 * The memory engine's factory, or undefined while test/conformance/engine-memory.ts does not exist. Loaded
 * lazily (require) so that the suite runs without it; once the file exists, any error loading it is thrown.
 */
function memoryFactory(): EngineFactory | undefined {
  const present = ['engine-memory.ts', 'engine-memory.js'].some((file) => fs.existsSync(path.join(__dirname, file)));
  if (!present) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = require('./engine-memory') as { memoryEngine?: EngineFactory };
  if (!loaded.memoryEngine) throw new Error('test/conformance/engine-memory.ts must export `memoryEngine: EngineFactory`');
  return loaded.memoryEngine;
}

/** The engines this run covers: memory (when its binding exists), plus getTargets() (DQ_TEST_TARGETS) for Redis. */
export function engines(): EngineFactory[] {
  const wanted = wantedEngines();
  const list: EngineFactory[] = [];
  if (wanted.includes('memory')) {
    const memory = memoryFactory();
    if (memory) list.push(memory);
  }
  for (const target of getTargets()) if (wanted.includes(target.name)) list.push(redisEngine(target));
  if (list.length === 0) throw new Error(`no engine to run (DQ_CONFORMANCE_ENGINES=${process.env.DQ_CONFORMANCE_ENGINES ?? ''}, DQ_TEST_TARGETS=${process.env.DQ_TEST_TARGETS ?? ''})`);
  return list;
}

/**
 * `describe.each` over `engines()`: `body` gets `start`, which starts an engine of the current factory (closed
 * in afterEach, whatever the test did), and the engine's name (for titles and comments; a case must not
 * branch on it).
 */
export function describeEngines(title: string, body: (start: StartEngine, name: EngineName) => void): void {
  describe.each(engines().map((factory) => [factory.name, factory] as const))(`${title} on %s`, (name, factory) => {
    const started: Engine[] = [];
    afterEach(async () => {
      await Promise.all(started.splice(0).map((engine) => engine.close()));
    });
    body(async (options = {}, workers = []) => {
      const engine = await factory.start(options, workers);
      started.push(engine);
      return engine;
    }, name);
  });
}

/** A promise with its resolve, for handlers that wait on the test (a gate) or tell it they started. */
export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The rejection of `promise` (fails when it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/**
 * Polls `read` (every 20 ms, at most `timeoutMs`) until it gives a value: for what Redis shows a little after
 * the call that made it (reports written every 200 ms, a flow's end, a hand-back). Memory gives it at once.
 */
export async function until<T>(read: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
