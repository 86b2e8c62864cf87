/**
 * The benchmark page's charts (issue 33, item 6): bench/charts.ts draws one SVG per workload with a key
 * figure, from the run's own rows (a full `npm run bench`), or again from the committed page
 * (`npm run bench:charts`). Needs no Redis.
 */
import * as fs from 'fs';
import * as path from 'path';
import { chartFile, chartsOf, renderChart, rowsOfPage } from '../bench/charts';

const ROOT = path.resolve(__dirname, '..');
const page = fs.readFileSync(path.join(ROOT, 'docs', 'benchmarks.md'), 'utf8');

describe('benchmark charts', () => {
  it('groups a run\'s rows by workload and key figure, each system a bar', () => {
    const charts = chartsOf([
      { workload: '1. immediate', system: 'this library', figures: {}, key: { name: 'process/s', value: 150_000 } },
      { workload: '1. immediate', system: 'bullmq', figures: {}, key: { name: 'process/s', value: 27_000 } },
      { workload: '4. memory', system: 'this library', figures: {}, key: { name: 'bytes/task', value: 191, lowerIsBetter: true } },
      { workload: '5. failover', system: 'this library', figures: {} },
    ]);
    expect(charts).toEqual([
      { workload: '1. immediate', figure: 'process/s', lowerIsBetter: false, bars: [{ system: 'this library', value: 150_000 }, { system: 'bullmq', value: 27_000 }] },
      { workload: '4. memory', figure: 'bytes/task', lowerIsBetter: true, bars: [{ system: 'this library', value: 191 }] },
    ]);
  });

  it('draws an SVG with a bar per system, lengths in proportion, text escaped', () => {
    const svg = renderChart({ workload: 'w <1> & "x"', figure: 'tasks/s', lowerIsBetter: false, bars: [{ system: 'a<b', value: 100 }, { system: 'bullmq', value: 50 }] });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('w &lt;1&gt; &amp; &quot;x&quot;: tasks/s (higher is better)');
    expect(svg).toContain('>a&lt;b<');
    const widths = [...svg.matchAll(/<rect x="250" y="\d+" width="(\d+)"/g)].map((m) => Number(m[1]));
    expect(widths).toEqual([300, 150]);
    expect(svg).not.toMatch(/<script|href=/);
  });

  it('the committed page shows a chart for each workload compared with BullMQ, and the files exist', () => {
    const charts = chartsOf(rowsOfPage(page));
    const ratios = new Set([...page.matchAll(/^\| ([^|]+?) \| [^|]+ \| [^|]+ \| [\d.]+× /gm)].map((m) => m[1]));
    expect(new Set(charts.map((c) => c.workload))).toEqual(ratios);
    for (const chart of charts) {
      const file = chartFile(`${chart.workload} ${chart.figure}`);
      expect(page).toContain(`](bench/${file})`);
      expect(fs.existsSync(path.join(ROOT, 'docs', 'bench', file))).toBe(true);
      expect(chart.bars.some((b) => b.system.startsWith('bullmq'))).toBe(true);
    }
  });
});
