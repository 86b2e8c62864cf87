import { DistributedQueueError, InvalidOptionsError } from '../errors';
import { resolveDashboardOptions } from '../dashboard/dashboard-options';
import { resolveModuleOptions } from './resolve-options';

/**
 * Every option of every section set to every kind of bad value: the module's options resolve or throw a typed
 * error (InvalidOptionsError and kin) naming the option, never a TypeError of the resolver's own code. The
 * options are found at run time (the message an unknown option gets lists the section's options), so an option
 * added later is swept too.
 */

const SECRET = 'a-secret-of-16-chars';
const BAD: unknown[] = [null, -1, 0, 1.5, NaN, Infinity, 1e15, '', 'x', true, {}, [], [1, 'a'], { bogus: 1 }, () => 1, Symbol('s'), BigInt(1)];

type Section = [name: string, at: (value: Record<string, unknown>) => object];
const SECTIONS: Section[] = [
  ['', (u) => u],
  ['defaults', (u) => ({ defaults: u })],
  ['types.t', (u) => ({ types: { t: u } })],
  ['defaults.backoff', (u) => ({ defaults: { backoff: u } })],
  ['defaults.rateLimit', (u) => ({ defaults: { rateLimit: { max: 1, perMs: 1000, ...u } } })],
  ['defaults.groupRateLimit', (u) => ({ defaults: { groupRateLimit: { max: 1, perMs: 1000, ...u } } })],
  ['route', (u) => ({ route: { qId: 'q', partitions: 2, ...u } })],
  ['events', (u) => ({ events: u })],
  ['metrics', (u) => ({ metrics: u })],
  ['tracing', (u) => ({ tracing: u })],
  ['history', (u) => ({ history: { connection: 'postgres://x@127.0.0.1/db', ...u } })],
  ['service', (u) => ({ mode: 'service', service: { appName: 'a', secret: SECRET, publicUrl: 'http://127.0.0.1:1', ...u } })],
  ['scheduler', (u) => ({ mode: 'scheduler', scheduler: { secret: SECRET, ...u } })],
  ['durability', (u) => ({ durability: { replicas: 1, ...u } })],
  ['flows', (u) => ({ flows: u })],
  ['taskLogs', (u) => ({ taskLogs: u })],
];

/** The options a section knows, from the message its unknown option gets. */
function knownKeys(at: Section[1]): string[] {
  try {
    resolveModuleOptions(at({ zzzz: 1 }) as never);
  } catch (error) {
    const listed = /\(known: ([^)]*)\)/.exec((error as Error).message);
    if (listed) return listed[1].split(', ');
  }
  return [];
}

describe('every option with every kind of bad value', () => {
  it.each(SECTIONS)('%s: resolves or throws a typed error, never a TypeError', (name, at) => {
    const keys = knownKeys(at);
    expect(keys.length).toBeGreaterThan(0);
    const untyped: string[] = [];
    for (const key of keys) {
      for (const value of BAD) {
        try {
          resolveModuleOptions(at({ [key]: value }) as never);
        } catch (error) {
          if (!(error instanceof DistributedQueueError)) untyped.push(`${name ? `${name}.` : ''}${key} = ${String(value)}: ${(error as Error)?.name}: ${(error as Error)?.message}`);
        }
      }
    }
    expect(untyped).toEqual([]);
  });

  it('the whole options object of every kind (forRootAsync factories return anything): typed', () => {
    const untyped: string[] = [];
    for (const value of BAD) {
      try {
        resolveModuleOptions(value as never);
      } catch (error) {
        if (!(error instanceof DistributedQueueError)) untyped.push(`${String(value)}: ${(error as Error)?.name}: ${(error as Error)?.message}`);
      }
      try {
        resolveDashboardOptions(value as never);
      } catch (error) {
        if (!(error instanceof InvalidOptionsError)) untyped.push(`dashboard ${String(value)}: ${(error as Error)?.name}: ${(error as Error)?.message}`);
      }
    }
    expect(untyped).toEqual([]);
  });

  it('the dashboard options: resolve or throw InvalidOptionsError', () => {
    const untyped: string[] = [];
    for (const key of ['path', 'token', 'guard', 'title', 'sessionTtlMs', 'zzzz']) {
      for (const value of BAD) {
        try {
          resolveDashboardOptions({ token: SECRET, [key]: value } as never);
        } catch (error) {
          if (!(error instanceof InvalidOptionsError)) untyped.push(`${key} = ${String(value)}: ${(error as Error)?.name}: ${(error as Error)?.message}`);
        }
      }
    }
    expect(untyped).toEqual([]);
  });
});
