import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { join } from 'path';
import type { Row } from './report';

/** One chart: a workload's key figure for each system that has it. */
export interface Chart {
  workload: string;
  figure: string;
  lowerIsBetter: boolean;
  bars: { system: string; value: number }[];
}

const WIDTH = 640;
const BAR = 22;
const GAP = 8;
const LABEL = 250;

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A file name for a workload: its number and words, lower case. */
export function chartFile(workload: string): string {
  return `${workload.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60)}.svg`;
}

/** The charts of a run: per workload with a key figure, every system's value of it (BullMQ's included). */
export function chartsOf(rows: Row[]): Chart[] {
  const charts = new Map<string, Chart>();
  for (const row of rows) {
    if (!row.key || !Number.isFinite(row.key.value)) continue;
    const id = `${row.workload}\n${row.key.name}`;
    const chart = charts.get(id) ?? { workload: row.workload, figure: row.key.name, lowerIsBetter: !!row.key.lowerIsBetter, bars: [] };
    chart.bars.push({ system: row.system, value: row.key.value });
    charts.set(id, chart);
  }
  return [...charts.values()];
}

/** A horizontal bar chart as SVG text (no script, no external reference). */
export function renderChart(chart: Chart): string {
  const max = Math.max(...chart.bars.map((b) => b.value), 1e-9);
  const height = 40 + chart.bars.length * (BAR + GAP);
  const bars = chart.bars.map((bar, i) => {
    const y = 32 + i * (BAR + GAP);
    const w = Math.max(1, Math.round(((WIDTH - LABEL - 90) * bar.value) / max));
    const colour = bar.system.startsWith('bullmq') ? '#9aa5b1' : '#2f7ed8';
    const value = bar.value >= 100 ? Math.round(bar.value).toLocaleString('en') : String(Math.round(bar.value * 100) / 100);
    return [
      `<text x="${LABEL - 8}" y="${y + 15}" text-anchor="end" font-size="12">${escape(bar.system)}</text>`,
      `<rect x="${LABEL}" y="${y}" width="${w}" height="${BAR}" fill="${colour}"/>`,
      `<text x="${LABEL + w + 6}" y="${y + 15}" font-size="12">${escape(value)}</text>`,
    ].join('');
  });
  const title = `${chart.workload}: ${chart.figure} (${chart.lowerIsBetter ? 'lower' : 'higher'} is better)`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="8" y="18" font-size="13" font-weight="bold">${escape(title)}</text>`,
    ...bars,
    '</svg>',
    '',
  ].join('\n');
}

/**
 * Writes the charts of `rows` to docs/bench/ (the old ones removed) and returns the Markdown that shows them
 * (relative to docs/).
 */
export function writeCharts(rows: Row[], docs = join(__dirname, '..', 'docs')): string {
  const dir = join(docs, 'bench');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const lines = ['## Charts', '', 'Drawn by the bench from this run (docs/bench/*.svg).', ''];
  for (const chart of chartsOf(rows)) {
    const file = chartFile(`${chart.workload} ${chart.figure}`);
    writeFileSync(join(dir, file), renderChart(chart));
    lines.push(`![${chart.workload}: ${chart.figure}](bench/${file})`, '');
  }
  return lines.join('\n');
}

/**
 * The rows of a benchmarks page's table (docs/benchmarks.md), with the key figure its ratio column names, so
 * that the charts of the committed run can be drawn again without running it (`npm run bench:charts`).
 */
export function rowsOfPage(markdown: string): Row[] {
  const rows: Row[] = [];
  const table = markdown.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| workload') && !line.startsWith('| ---'));
  const parsed = table.map((line) => line.split(' | ').map((cell) => cell.replace(/^\| ?| ?\|$/g, '').trim()));
  const keyOf = new Map<string, { name: string; lowerIsBetter: boolean }>();
  for (const [workload, , , ratio] of parsed) {
    const m = /^[\d.]+× (.+)$/.exec(ratio ?? '');
    if (m) keyOf.set(workload, { name: m[1], lowerIsBetter: /lateness|round trip|bytes|ms|p99/.test(m[1]) });
  }
  for (const [workload, system, figureText] of parsed) {
    const figures: Record<string, string> = {};
    for (const part of (figureText ?? '').split(', ')) {
      const at = part.lastIndexOf(' ');
      if (at > 0) figures[part.slice(0, at)] = part.slice(at + 1);
    }
    const key = keyOf.get(workload);
    const row: Row = { workload, system, figures };
    if (key) {
      // NOTE: a p99 key ("p99 lateness (all)", "p99 round trip", "small p99 wait") is the middle of a
      // "p50/p99/max" figure: the one of "(all)" for such a key, or the one named by the key's other words
      const words = key.name.split(' ').filter((word) => word !== 'p99');
      const p99 = key.name.includes('p99')
        ? Object.entries(figures).find(([name]) => name.includes('p50/p99/max') && (key.name.startsWith('p99') ? !key.name.includes('(all)') || name.includes('(all)') : words.every((word) => name.includes(word))))?.[1]
        : undefined;
      const text = figures[key.name] ?? p99;
      const value = text === undefined ? NaN : Number(text.split('/').length === 3 ? text.split('/')[1] : text);
      if (Number.isFinite(value)) row.key = { name: key.name, value, lowerIsBetter: key.lowerIsBetter };
    }
    rows.push(row);
  }
  return rows;
}

if (require.main === module) {
  const docs = join(__dirname, '..', 'docs');
  const page = readFileSync(join(docs, 'benchmarks.md'), 'utf8');
  const section = writeCharts(rowsOfPage(page), docs);
  const start = page.indexOf('## Charts');
  const next = start < 0 ? -1 : page.indexOf('\n## ', start + 1);
  const rest = start < 0 ? page : page.slice(0, start) + (next < 0 ? '' : page.slice(next + 1));
  const at = rest.indexOf('\n## ', rest.indexOf('| --- |'));
  writeFileSync(join(docs, 'benchmarks.md'), at < 0 ? `${rest.trimEnd()}\n\n${section}` : `${rest.slice(0, at + 1)}${section}\n${rest.slice(at + 1)}`);
}
