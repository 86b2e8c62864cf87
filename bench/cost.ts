import { Socket } from 'net';
import type { Redis } from 'ioredis';
import type { Row } from './report';
import { nodeCpu, sampleServer, type ServerSample } from './stats';

/**
 * What a measured run cost per task (issue 34, item 3): this process's CPU, the Redis server's CPU, the
 * commands Redis ran (those run inside scripts included) and the sends to Redis from this process (socket
 * writes that reached the kernel: a pipeline of commands written together is one send; the round trips a
 * task costs, at most). A workload whose workers run in other processes adds their CPU to `nodeCpuS` and has
 * no sends (`NaN`).
 */
export interface Cost {
  tasks: number;
  nodeCpuS: number;
  redisCpuS: number;
  calls: number;
  sends: number;
  /** CPU of the PostgreSQL backends writing the task history, once it was all written (history rows only). */
  pgCpuS?: number;
}

/** The counters at a run's start. */
export interface CostMark {
  server: ServerSample;
  node: number;
  sends: number;
}

let sends = 0;
const ports = new Set<number>();

/**
 * Counts this process's socket writes to `redis`'s port from now on: Node's `_write` (one chunk) and `_writev`
 * (chunks buffered while a write was under way, sent together) are each one send.
 */
function countSendsTo(redis: Redis): void {
  const port = Number(redis.options.port);
  if (ports.has(port)) return;
  if (ports.size === 0) {
    const proto = Socket.prototype as unknown as Record<'_write' | '_writev', (this: Socket, ...args: unknown[]) => unknown>;
    for (const name of ['_write', '_writev'] as const) {
      const original = proto[name];
      proto[name] = function (this: Socket, ...args: unknown[]) {
        if (this.remotePort !== undefined && ports.has(this.remotePort)) sends++;
        return original.apply(this, args);
      };
    }
  }
  ports.add(port);
}

/** Reads the counters before a run (`redis`: the benchmark's own client of the server the run uses). */
export async function markCost(redis: Redis): Promise<CostMark> {
  countSendsTo(redis);
  const server = await sampleServer(redis);
  return { server, node: nodeCpu(), sends };
}

/** The cost of the run since `mark`, for `tasks` tasks. */
export async function costSince(redis: Redis, mark: CostMark, tasks: number): Promise<Cost> {
  const node = nodeCpu();
  const sent = sends;
  const after = await sampleServer(redis);
  return {
    tasks,
    nodeCpuS: node - mark.node,
    redisCpuS: after.cpu - mark.server.cpu,
    calls: after.calls - mark.server.calls,
    sends: sent - mark.sends,
  };
}

const perTask = (value: number, tasks: number, scale: number, digits: number): string =>
  Number.isFinite(value) ? ((value * scale) / tasks).toFixed(digits) : 'n/a';

/**
 * The per-task cost of every row that measured one, as a Markdown table, with Redis's own ceiling (row 8's
 * µs per EVALSHA of `return 1`) beside it: how many such calls a task's Redis time is worth.
 */
export function renderCosts(rows: Row[]): string {
  const ceiling = Number(rows.find((r) => r.workload.startsWith('8. Redis ceiling'))?.figures['µs per call']);
  const lines = [
    '| workload | system | tasks | Node CPU µs/task | Redis CPU µs/task | Redis commands/task | sends to Redis/task | Redis time in ceiling calls | PostgreSQL CPU µs/task |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const row of rows) {
    const c = row.cost;
    if (!c || c.tasks <= 0) continue;
    const redisUs = (c.redisCpuS * 1e6) / c.tasks;
    lines.push(
      `| ${row.workload} | ${row.system} | ${c.tasks} | ${perTask(c.nodeCpuS, c.tasks, 1e6, 1)} | ${redisUs.toFixed(1)} | ` +
        `${perTask(c.calls, c.tasks, 1, 1)} | ${perTask(c.sends, c.tasks, 1, 2)} | ${Number.isFinite(ceiling) ? (redisUs / ceiling).toFixed(1) : 'n/a'} | ` +
        `${c.pgCpuS === undefined ? '' : perTask(c.pgCpuS, c.tasks, 1e6, 1)} |`,
    );
  }
  return lines.length > 2 ? lines.join('\n') : '';
}
