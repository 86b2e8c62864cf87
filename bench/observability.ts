import { readFileSync } from 'fs';
import { Injectable } from '@nestjs/common';
import { Client } from 'pg';
import { Registry } from 'prom-client';
import { OnTaskEvent, type DistributedQueueModuleOptions } from 'nestjs-distributed-queue';

/**
 * How much of the operations side runs: `default` as installed (event streams on, metrics off), `all`
 * (streams followed by a fleet listener, a local listener of every event, Prometheus metrics), `none`
 * (streams off, no metrics), `history` (the task history written into PostgreSQL), `everything` (`all` and
 * `history` together, each handler returning a small result, kept with its finished task).
 */
export type Observability = 'default' | 'all' | 'none' | 'history' | 'everything';

/** A listener of every local event and of the fleet's completions (what an application watching its tasks adds). */
@Injectable()
class EventCounter {
  count = 0;
  @OnTaskEvent('*', '*')
  on(): void {
    this.count++;
  }

  @OnTaskEvent('bench', 'completed', { scope: 'fleet' })
  onFleet(): void {
    this.count++;
  }
}

/** Each setting's label in the table and the providers its worker app adds. */
export const OBSERVED: Record<Observability, { label: string; providers: unknown[] }> = {
  default: { label: '', providers: [] },
  all: { label: ' (events+metrics on)', providers: [EventCounter] },
  none: { label: ' (events+metrics off)', providers: [] },
  history: { label: ' (history on)', providers: [] },
  everything: { label: ' (events, metrics, history, results on)', providers: [EventCounter] },
};

/** Whether a setting writes the task history (its producer then runs a writer too). */
export const withHistory = (observability: Observability): boolean => observability === 'history' || observability === 'everything';

/** The PostgreSQL the history runs against (the machine's; each run in a schema of its own, dropped at close). */
const PG = process.env.BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The schema this run's history goes into; a child process gets its parent's through BENCH_SCHEMA. */
export const BENCH_SCHEMA = process.env.BENCH_SCHEMA ?? `dq_bench_${process.pid}`;

/** The module options of a setting (a fresh metrics registry each time). */
export function observabilityOptions(observability: Observability): DistributedQueueModuleOptions {
  switch (observability) {
    case 'all':
      return { metrics: { registry: new Registry() } };
    case 'none':
      return { events: { stream: false } };
    case 'history':
      return { history: { connection: PG, schema: BENCH_SCHEMA } };
    case 'everything':
      return { ...observabilityOptions('all'), ...observabilityOptions('history') };
    default:
      return {};
  }
}

/** Drops the history schema of this run. */
export async function dropBenchSchema(): Promise<void> {
  const client = new Client({ connectionString: PG });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${BENCH_SCHEMA} CASCADE`);
  await client.end();
}

/**
 * CPU seconds (user + system) the PostgreSQL backends of the history writers have used so far, from
 * /proc/<pid>/stat of each backend whose application_name is the library's (this machine's server). A backend
 * that started after a first sample counts from 0; one that ended between samples is missed (the writer's
 * pool keeps its connections for 10 s idle: longer than a run's span). 0 when /proc is not readable.
 */
export async function historyBackendsCpu(): Promise<number> {
  const client = new Client({ connectionString: PG });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = 'nestjs-distributed-queue history'`);
    const ticks = Number(process.env.CLK_TCK ?? 100);
    let seconds = 0;
    for (const { pid } of rows) {
      try {
        // fields after the command's closing parenthesis: state is the 1st, utime the 12th, stime the 13th
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        seconds += (Number(fields[11]) + Number(fields[12])) / ticks;
      } catch {
        // the backend ended meanwhile
      }
    }
    return seconds;
  } finally {
    await client.end();
  }
}
