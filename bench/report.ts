import { writeFileSync } from 'fs';
import { cpus } from 'os';
import { join } from 'path';

/** One row of the table: a workload measured on one system. */
export interface Row {
  workload: string;
  system: string;
  /** Named figures, printed in order. */
  figures: Record<string, string | number>;
  /** The figure compared across systems (higher is better unless `lowerIsBetter`). */
  key?: { name: string; value: number; lowerIsBetter?: boolean };
}

function ratio(rows: Row[], row: Row): string {
  if (!row.key) return '';
  const bull = rows.find((r) => r.workload === row.workload && r.system.startsWith('bullmq') && r.key?.name === row.key!.name);
  if (!bull || bull === row || !bull.key || !Number.isFinite(bull.key.value) || bull.key.value === 0) return '';
  const value = row.key.lowerIsBetter ? bull.key.value / row.key.value : row.key.value / bull.key.value;
  return `${value.toFixed(2)}× ${row.key.name}`;
}

/** The table as Markdown. */
export function renderTable(rows: Row[]): string {
  const lines = ['| workload | system | figures | vs BullMQ |', '| --- | --- | --- | --- |'];
  for (const row of rows) {
    const figures = Object.entries(row.figures).map(([k, v]) => `${k} ${v}`).join(', ');
    lines.push(`| ${row.workload} | ${row.system} | ${figures} | ${ratio(rows, row)} |`);
  }
  return lines.join('\n');
}

const NOTES = `## Reading the figures

- Immediate: this library spends about 3 to 4 times less CPU than BullMQ in Node and in Redis (1.7 Redis
  commands per task against 37: a worker acks the tasks it finished and reserves the next ones in one script
  call, for at most its free slots, with two such calls in flight). What bounds it now is Redis's time in
  that script, about 6 to 8 µs per task (the reservation lives in a small hash, so reserving and acking never
  copy the payload; a never-run task's record goes out whole). The fetch also keeps its reply for a repeat
  (one key per worker, overwritten by each fetch), so a command re-sent after a reconnect reserves nothing
  twice.
- Events and metrics: "on" is what an application watching its queues runs: the event streams (one XADD
  per fetch's batch of acks, in the same script), a listener of every local event and Prometheus metrics
  (plain per-type numbers read by prom-client at scrape time); "off" sets \`events: { stream: false }\` and no
  metrics. The two alternate, twice each after a warm-up, and the better run of each is shown: a single
  pair moves by ±10 % with the order it ran in. Other workloads run with the defaults (streams on).
- History on: the same workload with the task history copied into PostgreSQL (the machine's PostgreSQL 15,
  a schema of its own) by a writer in the same process, default options. Between 68 and 85 % of off over
  the full runs of the last two sessions (single runs vary by ±10 %; see the row above for this run). What it costs: PostgreSQL about 16 µs per row written, Node about
  6 µs per task (reading the stream, folding, the JSON record set), Redis the payloads logged at submit,
  all on the same two cores. What brought it from 60 % to here: a task that ends within \`coalesceMs\`
  (5 s) of its submit is written once, finished (one row version instead of two), and the record set is
  read as json rather than jsonb. With \`recordStarts\` (rows show running) it costs about a tenth more.
  Tried without gain: COPY into a staging table (the insert itself dominates), a plain UPDATE for rows
  known to exist.
- Delayed: workers sleep until the next due time that the fetch script returns and are woken when an
  earlier task arrives, so lateness is a timer's; BullMQ's p99 over all tasks includes the backlog it
  builds while the tasks are being added. Tasks due at the same millisecond start in submission order.
- Service mode: the same delayed tasks run by the scheduler (\`apps/scheduler\`, its own process) and
  delivered over HTTP to two instances of a client application (each its own process), timed where the
  handler starts. The hop costs a take in the scheduler, one signed request per instance per batch of tasks
  due together (up to 100), the instance's verification (HMAC, a \`SET NX\` against replays) and its
  streamed answer; with four Node processes and Redis on two cores, CPU is what adds the lateness. One
  request per task (before batching) gave p99 776 ms at 1,700 tasks/s in a quick run: the processes could
  not keep up.
- Ordered: two processes, each ordered worker at \`concurrency: 50\` (issue 14's setting; it was 128, what 4
  partitions × \`keyConcurrency\` 32 gave before: at 50, three runs on 2026-11-22 gave 24–30× BullMQ, median
  26×, short of the 30× target). Order is judged by the time each task first started.
  BullMQ is only order-safe at concurrency 1. At concurrency 50 it saw no violations here because a key's
  tasks are 500 jobs apart in its queue; that is luck of the workload, not a guarantee.
- Memory: one hash entry and one sorted-set entry per pending task; the record is the payload behind a
  short sequence tag (FIFO order) until a run fails, and generated ids are short (\`#<hex>\`).
- Round trip: one immediate task at a time, timed from the submit call to the handler's start in the same
  process (producer and worker together, for both systems), after 50 unrecorded warm-up tasks. The path is
  the submit script, its wake-up message on the type's channel, a take, the handler. The p99 target of
  2 ms (issue 14) is missed, by BullMQ too: 2 to 3 % of round trips take 2 to 5 ms. Timing the parts
  shows two kinds: about half are the submit's own reply from Redis arriving late, half the wake-up and
  take after a fast submit. Neither tracks garbage collection (a larger young generation changed nothing),
  which points at scheduling on two cores shared by Redis and Node; not yet solved.
- Redis ceiling: what this Redis on this machine does with nothing but EVALSHA of \`return 1\`, 16 per
  pipeline, 50 connections (\`redis-benchmark\`). Beside it, the Redis CPU time per task of the immediate
  workload (events and metrics off): how many such calls a task costs, so how close to Redis's own limit
  the library runs.
- Scale-out: a real 3-master cluster started here (no replicas) against a single server, one application
  running three types at concurrency 50 each. A type lives in one slot, so the names are chosen to put each
  type on its own master; the commands then split in thirds. The throughput stays that of one server
  because one Node process runs all three types and is the bound here (and the three masters share the
  same two cores). The route queue's partitions each have their own hash tag, so where they land is up to
  the hash: with 12 partitions the count per master can exceed the issue's bound of ⌈N/3⌉+1 (choosing
  tags by slot would even them out, at the cost of renaming every partition's keys; not done).
- The machine is shared: the same code measures up to ±30 % apart from run to run; compare ratios from one
  run, and several runs before drawing a conclusion.
`;

/** Writes docs/benchmarks.md with the machine and the date. */
export function writeReport(rows: Row[], meta: { redis: string; quick: boolean; seconds: number }): string {
  const text = [
    '# Benchmarks',
    '',
    `Run ${new Date().toISOString()} with \`npm run bench${meta.quick ? ' -- --quick' : ''}\` in ${meta.seconds} s on ${cpus().length} cores ` +
      `(${cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}, Redis ${meta.redis} (a redis-server the benchmark starts ` +
      'on a free port, stock settings but no RDB snapshots). Both systems run the same tasks with ~100-byte payloads in the same run. ' +
      'Ratios: this library over BullMQ (for latency and memory: BullMQ over this library), so above 1 is better.',
    '',
    renderTable(rows),
    '',
    NOTES,
  ].join('\n');
  if (!meta.quick) writeFileSync(join(__dirname, '..', 'docs', 'benchmarks.md'), text);
  return text;
}
