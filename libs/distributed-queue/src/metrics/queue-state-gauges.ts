import type { Gauge, Registry } from 'prom-client';
import type { ResolvedMetricsOptions } from '../options/resolve-observability';
import { registeredMetric } from './metric-registration';
import type { PromClientModule } from './prom-client.loader';
import { COUNTED_STATES, type QueueStateReader } from './queue-state.reader';
import { LIMIT_GAUGES } from './limit-gauges';
import { GROUP_GAUGES } from './group-gauges';
import type { GaugeDefinition, GaugeLabel } from './gauge-definition';

/** The readers of every application sharing one gauge (two applications in one process share metrics). */
const readersOf = new WeakMap<object, Set<QueueStateReader>>();

const GAUGES: GaugeDefinition[] = [
  {
    suffix: 'tasks',
    help: 'Tasks per type and state (delayed, ready, running, dead, done), read from Redis at scrape time',
    labelNames: ['type', 'state'],
    fill: (gauge, { tasks }) => {
      for (const { type, counts } of tasks) for (const state of COUNTED_STATES) gauge.set({ type, state }, counts[state]);
    },
  },
  {
    suffix: 'tasks_waiting_by_priority',
    help: 'Waiting tasks (delayed and ready) per delay-queue type and priority level (levels present only), read from Redis at scrape time',
    labelNames: ['type', 'priority'],
    fill: (gauge, { tasks }) => {
      for (const { type, counts } of tasks) for (const [priority, n] of Object.entries(counts.priorities ?? {})) gauge.set({ type, priority }, n);
    },
  },
  ...LIMIT_GAUGES,
  ...GROUP_GAUGES,
  {
    suffix: 'route_partitions_owned',
    help: 'Route queue partitions this machine owns, read from Redis at scrape time',
    labelNames: ['queue', 'machine'],
    fill: (gauge, { route }) => {
      if (route?.machine !== undefined) gauge.set({ queue: route.queue, machine: route.machine }, route.partitionsOwned ?? 0);
    },
  },
  {
    suffix: 'route_machines_live',
    help: 'Machines registered in the route queue (silent ones are evicted after offlineMs), read from Redis at scrape time',
    labelNames: ['queue'],
    fill: (gauge, { route }) => {
      if (route) gauge.set({ queue: route.queue }, route.machinesLive);
    },
  },
  {
    suffix: 'history_backlog_entries',
    help: 'Event stream entries waiting to be copied into the task history (PostgreSQL), per stream, read at scrape time',
    labelNames: ['stream'],
    fill: (gauge, { history }) => {
      for (const { stream, entries } of history ?? []) gauge.set({ stream }, entries);
    },
  },
  {
    suffix: 'redis_memory_used_bytes',
    help: "Redis's used_memory per server (each master of a cluster), read at scrape time",
    labelNames: ['node'],
    fill: (gauge, { memory }) => {
      for (const { node, usedBytes } of memory ?? []) gauge.set({ node }, usedBytes);
    },
  },
  {
    suffix: 'redis_memory_max_bytes',
    help: "Redis's maxmemory per server (0: no limit), read at scrape time; writes are refused when used reaches it",
    labelNames: ['node'],
    fill: (gauge, { memory }) => {
      for (const { node, maxBytes } of memory ?? []) gauge.set({ node }, maxBytes);
    },
  },
  {
    suffix: 'schedule_next_tick_timestamp_seconds',
    help: 'Next tick of each schedule (distributed cron), epoch seconds, read from Redis at scrape time',
    labelNames: ['schedule'],
    fill: (gauge, { schedules }) => {
      for (const { name, nextTickAt } of schedules ?? []) if (nextTickAt !== null) gauge.set({ schedule: name }, nextTickAt / 1000);
    },
  },
  {
    suffix: 'schedule_last_tick_timestamp_seconds',
    help: 'Last tick handled of each schedule (distributed cron), epoch seconds, read from Redis at scrape time',
    labelNames: ['schedule'],
    fill: (gauge, { schedules }) => {
      for (const { name, lastTickAt } of schedules ?? []) if (lastTickAt !== null) gauge.set({ schedule: name }, lastTickAt / 1000);
    },
  },
];

/**
 * The gauges computed at scrape time from `reader` (an async `collect`). A scrape while Redis is down
 * shows the last values (the reader bounds the wait). Returns a function that removes this reader.
 */
export function attachQueueStateGauges(client: PromClientModule, registry: Registry, options: ResolvedMetricsOptions, reader: QueueStateReader): () => void {
  const gauges = GAUGES.map(({ suffix, help, labelNames, fill }) => {
    const name = options.prefix + suffix;
    const gauge: Gauge<GaugeLabel> = registeredMetric(registry, name, client.Gauge, () => {
      const created: Gauge<GaugeLabel> = new client.Gauge({
        name, help, labelNames, registers: [registry],
        collect: async () => {
          const snapshots = await Promise.all([...(readersOf.get(created) ?? [])].map((r) => r.read()));
          // NOTE: reset only once every reader answered (or gave its last snapshot): a scrape never shows half.
          created.reset();
          for (const snapshot of snapshots) if (snapshot) fill(created, snapshot);
        },
      });
      return created;
    });
    const readers = readersOf.get(gauge) ?? new Set<QueueStateReader>();
    readersOf.set(gauge, readers.add(reader));
    return readers;
  });
  return () => gauges.forEach((readers) => readers.delete(reader));
}
