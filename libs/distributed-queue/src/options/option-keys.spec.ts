import { readFileSync } from 'fs';
import { join } from 'path';
import { InvalidOptionsError } from '../errors';
import { resolveModuleOptions } from './resolve-options';

/** Members of an exported interface of src/interfaces, read from its source. */
function interfaceKeys(file: string, name: string): string[] {
  const text = readFileSync(join(__dirname, '..', 'interfaces', file), 'utf8');
  const from = text.indexOf(`export interface ${name} `);
  expect(from).toBeGreaterThanOrEqual(0);
  const body = text.slice(from, text.indexOf('\n}', from));
  return [...body.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1]);
}

/** The known options an unknown key's message lists, for options built by `at(unknown)`. */
function listedKeys(at: (unknown: Record<string, unknown>) => object, option: string): string[] {
  try {
    resolveModuleOptions(at({ zzzz: 1 }) as never);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as InvalidOptionsError).option).toBe(option);
    return /\(known: ([^)]*)\)/.exec((error as Error).message)![1].split(', ');
  }
  throw new Error(`${option}: accepted`);
}

const SECRET = 'a-secret-of-16-chars';
describe('unknown option messages', () => {
  it.each([
    ['module-options.interface.ts', 'DistributedQueueModuleOptions', (u: object) => u, 'zzzz'],
    ['task-worker-options.interface.ts', 'TaskWorkerOptions', (u: object) => ({ defaults: u }), 'defaults.zzzz'],
    ['task-worker-options.interface.ts', 'BackoffOptions', (u: object) => ({ types: { t: { backoff: u } } }), 'types.t.backoff.zzzz'],
    ['route-options.interface.ts', 'RouteQueueOptions', (u: object) => ({ route: u }), 'route.zzzz'],
    ['task-event.interface.ts', 'EventsOptions', (u: object) => ({ events: u }), 'events.zzzz'],
    ['observability-options.interface.ts', 'MetricsOptions', (u: object) => ({ metrics: u }), 'metrics.zzzz'],
    ['observability-options.interface.ts', 'TracingOptions', (u: object) => ({ tracing: u }), 'tracing.zzzz'],
    ['history-options.interface.ts', 'HistoryOptions', (u: object) => ({ history: u }), 'history.zzzz'],
    ['service-options.interface.ts', 'ServiceClientOptions', (u: object) => ({ mode: 'service', service: u }), 'service.zzzz'],
    ['service-options.interface.ts', 'ServiceSchedulerOptions', (u: object) => ({ mode: 'scheduler', scheduler: { secret: SECRET, ...u } }), 'scheduler.zzzz'],
  ])('%s %s: lists exactly the options of the interface', (file, name, at, option) => {
    expect(listedKeys(at, option).sort()).toEqual(interfaceKeys(file, name).sort());
  });

  it('suggests the closest known option', () => {
    expect(() => resolveModuleOptions({ keyPrefx: 'a' } as never)).toThrow(/"keyPrefx": unknown option \(did you mean keyPrefix\?\)/);
    expect(() => resolveModuleOptions({ defaults: { concurrancy: 2 } } as never)).toThrow(/did you mean concurrency\?/);
  });

  it('names NaN and Infinity in value messages', () => {
    expect(() => resolveModuleOptions({ shutdownTimeoutMs: Number.NaN })).toThrow(/got NaN/);
    expect(() => resolveModuleOptions({ keepDone: Infinity })).toThrow(/got Infinity/);
    expect(() => resolveModuleOptions({ defaults: { backoff: { jitter: Number.NaN } } })).toThrow(/got NaN/);
  });
});
