import * as client from 'prom-client';
import { Registry } from 'prom-client';
import type { TaskCounts, TypeLimits } from '../interfaces';
import { attachQueueStateGauges } from './queue-state-gauges';
import { QueueStateReader, type QueueStateSnapshot } from './queue-state.reader';

const counts = (priorities?: Record<string, number>): TaskCounts => ({ delayed: 0, ready: 0, running: 0, dead: 0, done: 0, ...(priorities && { priorities }) });
const none = { configured: null, effective: null };

describe('the gauges of limits and priorities', () => {
  it('show the limits in force, leases and the rate-limited flag per type, and waiting tasks per priority level present', async () => {
    const limited: TypeLimits = {
      rateLimit: { configured: { max: 50, perMs: 1000, burst: 1 }, override: { max: 30, perMs: 60_000, burst: 1 }, effective: { max: 30, perMs: 60_000, burst: 1 } },
      globalConcurrency: { configured: 4, effective: 4 },
      running: 3,
      limitedUntil: 1_000,
    };
    const free: TypeLimits = { rateLimit: none, globalConcurrency: { configured: 2, override: null, effective: null }, running: 0, limitedUntil: null };
    const snapshot: QueueStateSnapshot = {
      tasks: [{ type: 'a', counts: counts({ '0': 5, '7': 2 }) }, { type: 'b', counts: counts() }],
      limits: [{ type: 'a', limits: limited }, { type: 'b', limits: free }],
    };
    const registry = new Registry();
    const reader = new QueueStateReader(async () => snapshot, { log: () => undefined, error: () => undefined, warn: () => undefined });
    const detach = attachQueueStateGauges(client, registry, { prefix: 'dq_', durationBuckets: [1], latenessBuckets: [1], includeInternalTypes: false }, reader);
    const text = await registry.metrics();
    detach();
    const lines = text.split('\n').filter((line) => /^dq_(rate_limit|global_concurrency|leases_live|rate_limited|tasks_waiting_by_priority)/.test(line));
    expect(lines.sort()).toEqual([
      'dq_global_concurrency{type="a"} 4',
      'dq_leases_live{type="a"} 3',
      'dq_leases_live{type="b"} 0',
      'dq_rate_limit_per_second{type="a"} 0.5',
      'dq_rate_limited{type="a"} 1',
      'dq_rate_limited{type="b"} 0',
      'dq_tasks_waiting_by_priority{type="a",priority="0"} 5',
      'dq_tasks_waiting_by_priority{type="a",priority="7"} 2',
    ]);
  });
});
