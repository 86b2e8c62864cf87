import { InvalidOptionsError } from '../errors';
import { quote } from '../errors/quote';
import type { DistributedQueueModuleOptions, TaskWorkerOptions } from '../interfaces';
import { validateWorkerOptions } from '../options/resolve-options';
import type { TestingMode } from './test-clock';

/** Options of `DistributedQueueTestingModule.forRoot`: the real module's, and when and how tasks run. */
export interface DistributedQueueTestingOptions extends Omit<DistributedQueueModuleOptions, 'mode' | 'service' | 'scheduler'> {
  /**
   * When tasks run:
   * - `manual`: only when the test says so (`TestQueue.runDue`, `advanceBy`, `drain`); the clock stands
   *   still from `now` and moves only with `advanceBy` / `setTime`.
   * - `auto`: as they fall due, on `Date.now()` (so Jest's fake timers move it too); `TestQueue.idle()`
   *   waits until nothing is due or running.
   * @default 'manual'
   */
  run?: TestingMode;
  /** Manual mode: the clock's start (epoch ms or Date). @default the time `forRoot` is called */
  now?: number | Date;
  /**
   * Worker options laid over each type's own (its `@TaskWorker` options included), by type: what a test
   * needs other than production, e.g. `{ 'invoice.send': { timeoutMs: 50, backoff: { jitter: 0 } } }`
   * (handler timeouts run on real time, and jitter makes retry times random). Not `ordered`.
   * @default none
   */
  workerOptions?: Record<string, Omit<TaskWorkerOptions, 'ordered'>>;
}

/** The testing options, resolved. */
export interface ResolvedTestingOptions {
  run: TestingMode;
  now: number;
  workerOptions: Record<string, TaskWorkerOptions>;
}

/**
 * Splits and checks the testing module's options: the testing ones, and the real module's (checked by it).
 * @throws InvalidOptionsError for a bad `run` or `now`, or service mode's options (a testing module runs its
 * tasks in process)
 */
export function checkTestingOptions(options: DistributedQueueTestingOptions): { testing: ResolvedTestingOptions; module: DistributedQueueModuleOptions } {
  if (options === null || typeof options !== 'object') throw new InvalidOptionsError('options', `must be an object, got ${quote(options)}`);
  const { run = 'manual', now, workerOptions = {}, ...module } = options;
  if (run !== 'manual' && run !== 'auto') throw new InvalidOptionsError('run', `must be 'manual' or 'auto', got ${quote(run)}`);
  for (const name of ['mode', 'service', 'scheduler']) {
    if (name in module) throw new InvalidOptionsError(name, 'is not for the testing module: it runs every task in this process (test service mode against a scheduler)');
  }
  const start = now instanceof Date ? now.getTime() : (now ?? Date.now());
  if (typeof start !== 'number' || !Number.isFinite(start) || start < 0) throw new InvalidOptionsError('now', `must be epoch ms or a Date, got ${quote(now)}`);
  if (workerOptions === null || typeof workerOptions !== 'object' || Array.isArray(workerOptions)) {
    throw new InvalidOptionsError('workerOptions', `must be an object of worker options by type, got ${quote(workerOptions)}`);
  }
  for (const [type, layer] of Object.entries(workerOptions)) {
    validateWorkerOptions(layer, `workerOptions.${type}`);
    if (layer && 'ordered' in layer) throw new InvalidOptionsError(`workerOptions.${type}.ordered`, 'is the worker\'s own: a test cannot change it');
  }
  return { testing: { run, now: Math.floor(start), workerOptions }, module };
}
