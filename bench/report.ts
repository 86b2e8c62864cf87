import { writeFileSync } from 'fs';
import { writeCharts } from './charts';
import { cpus } from 'os';
import { join } from 'path';
import { NOTES } from './notes';
import { FLOW_NOTES } from './notes-flows';
import { RESULT_NOTES } from './notes-results';
import { COST_NOTES } from './notes-costs';
import { LATENCY_NOTES } from './notes-latency';
import { renderCosts, type Cost } from './cost';

/** One row of the table: a workload measured on one system. */
export interface Row {
  workload: string;
  system: string;
  /** Named figures, printed in order. */
  figures: Record<string, string | number>;
  /** The figure compared across systems (higher is better unless `lowerIsBetter`). */
  key?: { name: string; value: number; lowerIsBetter?: boolean };
  /** What the measured run cost (its per-task figures are the report's second table). */
  cost?: Cost;
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


/** The per-task costs' table under its heading (nothing when no row measured one). */
export function costSection(rows: Row[]): string[] {
  const table = renderCosts(rows);
  if (!table) return [];
  return [
    '## Where the time goes, per task',
    '',
    'Of the measured run of each row: CPU of the benchmark\'s process (producer and workers; for workload 3 its ' +
      'worker processes and producer), CPU of the Redis server, the commands Redis ran (those inside scripts ' +
      'included), the socket writes this process made to Redis (a pipeline written together is one: the round ' +
      'trips a task costs, at most), and the task\'s Redis time as a number of calls at Redis\'s own ceiling ' +
      '(workload 8: `EVALSHA` of `return 1`, pipelined). A flow row is per flow (a parent and its children); the ' +
      'Node CPU includes starting the system\'s applications, and the delayed rows the polling while tasks wait.',
    '',
    table,
    '',
  ];
}

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
    ...costSection(rows),
    // NOTE: a full run draws its charts (docs/bench/*.svg); a quick or partial one writes nothing
    ...(meta.quick ? [] : [writeCharts(rows)]),
    NOTES,
    FLOW_NOTES,
    RESULT_NOTES,
    COST_NOTES,
    LATENCY_NOTES,
  ].join('\n');
  if (!meta.quick) writeFileSync(join(__dirname, '..', 'docs', 'benchmarks.md'), text);
  return text;
}
