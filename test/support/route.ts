import type { Cluster, Redis } from 'ioredis';
import type { RouteQueueOptions, RouteStatus, TaskSubmitService } from 'nestjs-distributed-queue';
import { killAllChildren, spawnChild, type ChildHandle } from './child';
import { startQueueApp, type QueueApp } from './queue-app';
import { uniquePrefix, type RedisTarget } from './targets';
import { waitFor } from './wait';

/** Fast membership settings the route tests use: heartbeat and scheduler period 500 ms, offline 2 s. */
export function routeTestOptions(qId: string, machineId: string, partitions = 8, offlineMs = 2000, heartbeatMs = 500): RouteQueueOptions {
  return { qId, machineId, partitions, heartbeatMs, offlineMs, idleMs: offlineMs, rebalanceMs: heartbeatMs, batchSize: 50 };
}

/** Starts test/fixtures/route-app.ts as machine `machine`. */
export function startMachine(target: RedisTarget, prefix: string, qId: string, machine: string, env: Record<string, string> = {}): ChildHandle {
  return spawnChild('test/fixtures/route-app.ts', {
    DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: prefix, DQ_QID: qId, DQ_MACHINE: machine, ...env,
  });
}

/** One recorded task start. */
export interface Entry {
  n: number;
  machine: string;
  partition: number;
  epoch: number;
  at: number;
}

/** Reads the list `<prefix>:<name>:<key>` of every key, each line `a|b|...` parsed by `parse`. */
async function readRecords<T>(redis: Redis | Cluster, prefix: string, name: string, keys: string[], parse: (f: string[]) => T): Promise<Map<string, T[]>> {
  const lists = await Promise.all(keys.map((k) => redis.lrange(`${prefix}:${name}:${k}`, 0, -1)));
  return new Map(keys.map((k, i) => [k, lists[i].map((line) => parse(line.split('|')))]));
}

/** Reads the start log of every key. */
export function readLog(redis: Redis | Cluster, prefix: string, keys: string[]): Promise<Map<string, Entry[]>> {
  return readRecords(redis, prefix, 'log', keys, ([n, machine, partition, epoch, at]) => ({
    n: Number(n), machine, partition: Number(partition), epoch: Number(epoch), at: Number(at),
  }));
}

/** One recorded run of a task (with DQ_SPANS=1): when its handler started and ended, in which process. */
export interface Span {
  n: number;
  machine: string;
  start: number;
  end: number;
}

/** Reads the spans of every key, in the order they ended. */
export function readSpans(redis: Redis | Cluster, prefix: string, keys: string[]): Promise<Map<string, Span[]>> {
  return readRecords(redis, prefix, 'span', keys, ([n, machine, start, end]) => ({ n: Number(n), machine, start: Number(start), end: Number(end) }));
}

/** Pairs of runs of one key on different machines whose handler intervals overlap (at most `max` listed). */
export function overlaps(spans: Map<string, Span[]>, max = 5): string[] {
  const found: string[] = [];
  for (const [key, list] of spans) {
    const sorted = [...list].sort((a, b) => a.start - b.start);
    for (let i = 0; i < sorted.length && found.length < max; i++) {
      for (let j = i + 1; j < sorted.length && sorted[j].start < sorted[i].end; j++) {
        if (sorted[j].machine === sorted[i].machine || found.length >= max) continue;
        const [a, b] = [sorted[i], sorted[j]];
        found.push(`${key}: n${a.n}@${a.machine} [${a.start}, ${a.end}] overlaps n${b.n}@${b.machine} [${b.start}, ${b.end}]`);
      }
    }
  }
  return found;
}

/** What the log says about order and loss. `perKey` tasks numbered 0..perKey-1 were submitted per key. */
export function checkLog(log: Map<string, Entry[]>, perKey: number) {
  let missing = 0;
  let overtakes = 0;
  let duplicates = 0;
  let staleEpochs = 0;
  const byMachine: Record<string, number> = {};
  const partitionEntries = new Map<number, Entry[]>();
  for (const entries of log.values()) {
    const seen = new Set<number>();
    for (const e of entries) {
      byMachine[e.machine] = (byMachine[e.machine] ?? 0) + 1;
      if (seen.has(e.n)) duplicates++;
      // Order: a task starts for the first time only after every earlier task of its key started.
      else if (e.n !== seen.size) overtakes++;
      seen.add(e.n);
      const list = partitionEntries.get(e.partition) ?? [];
      list.push(e);
      partitionEntries.set(e.partition, list);
    }
    missing += perKey - seen.size;
  }
  // Fencing: within a partition, no task starts under an older epoch after one started under a newer epoch.
  const stale: string[] = [];
  for (const entries of partitionEntries.values()) {
    entries.sort((a, b) => a.at - b.at);
    let newest: Entry | undefined;
    for (const e of entries) {
      if (newest && e.epoch < newest.epoch) {
        staleEpochs++;
        if (stale.length < 5) stale.push(`p${e.partition} ${e.machine}@${e.epoch} n${e.n} at ${e.at} after ${newest.machine}@${newest.epoch} at ${newest.at}`);
      }
      if (!newest || e.epoch > newest.epoch) newest = e;
    }
  }
  if (stale.length > 0) console.log(`stale-epoch starts: ${stale.join('; ')}`);
  return { missing, overtakes, duplicates, staleEpochs, byMachine };
}

/** Submits `perKey` tasks for each key, in order per key (n = 0, 1, ...), keys interleaved, `paceMs` between rounds. */
export async function submitLoad(submit: TaskSubmitService, keys: string[], perKey: number, from = 0, paceMs = 0): Promise<void> {
  for (let n = from; n < from + perKey; n++) {
    await Promise.all(keys.map((k) => submit.submitOrdered('ledger', k, { n })));
    if (paceMs > 0) await new Promise((resolve) => setTimeout(resolve, paceMs));
  }
}

/** True when every machine holds ⌊N/M⌋..⌈N/M⌉ active partitions. */
export function balanced(status: RouteStatus, machines: string[]): boolean {
  const n = status.partitions.length;
  return machines.every((m) => {
    const c = status.partitions.filter((p) => p.owner === m && p.state === 'active').length;
    return c >= Math.floor(n / machines.length) && c <= Math.ceil(n / machines.length);
  });
}

/**
 * Jest hooks for route suites: `setup` starts a producer app and machine processes and waits until the
 * partitions are balanced; everything is stopped after each test.
 */
export function useRouteMachines(target: RedisTarget) {
  let producer: QueueApp | undefined;
  afterEach(async () => {
    await producer?.close();
    producer = undefined;
    await killAllChildren();
  });
  /**
   * `later`: machines started at the same time with DQ_WAIT_JOIN=1 (returned as `joining`): they load
   * meanwhile and join when sent { type: 'join' } (a child process takes seconds to load on a loaded machine).
   */
  return async function setup(label: string, machines: string[], env: Record<string, string> = {}, later: string[] = []) {
    const prefix = uniquePrefix(label);
    const qId = `q-${label}`;
    producer = await startQueueApp({
      connection: target.connection, keyPrefix: prefix, workers: false,
      types: { ledger: { ordered: true } }, route: routeTestOptions(qId, 'producer'),
    });
    const children = new Map<string, ChildHandle>();
    const start = (m: string) => {
      const child = startMachine(target, prefix, qId, m, env);
      children.set(m, child);
      return child.waitForMessage((msg) => msg.type === 'ready', 30_000);
    };
    const joining = later.map((m) => {
      const child = startMachine(target, prefix, qId, m, { ...env, DQ_WAIT_JOIN: '1' });
      children.set(m, child);
      return child;
    });
    await Promise.all(machines.map(start));
    const submit = producer.submit;
    const { inspect, control } = producer;
    await waitFor(async () => balanced(await inspect.getRouteStatus(), machines), { timeoutMs: 10_000, message: 'partitions balanced' });
    return { prefix, qId, children, joining, start, submit, inspect, control };
  };
}
