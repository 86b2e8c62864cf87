/**
 * `node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/profile/lateness.ts [--count=N
 * --spread=MS]`: workload 2 (delayed) on this library alone, as the benchmark runs it (producer and worker in one
 * process, the submit in chunks of 1,000, four at a time), then where the late starts are: lateness percentiles
 * of the tasks due during the submit and after it, and the starts more than 3 ms late by when they fell due.
 */
import 'reflect-metadata';
import { ours, type Start } from '../systems';
import { payload, percentiles } from '../stats';
import { arg, withServer } from './args-and-costs';

withServer(async (url) => {
  const n = Number(arg('count', '20000'));
  const spreadMs = Number(arg('spread', '10000'));
  const rounds = Number(arg('rounds', '2'));
  let starts: Start[] = [];
  const system = ours(url, `late${Date.now()}`);
  try {
    await system.work(50, (s) => void starts.push(s));
    for (let round = 1; round <= rounds; round++) {
    starts = [];
    console.log(`round ${round}${round < rounds ? ' (warm-up)' : ''}`);
    const items = Array.from({ length: n }, (_, i) => ({ payload: payload(i), delay: Math.floor((i / n) * spreadMs) }));
    const submitStart = Date.now();
    await system.submit(items);
    const submitEnd = Date.now();
    while (starts.length < n) await new Promise((resolve) => setTimeout(resolve, 50));
    const during = starts.filter((s) => s.dueAt <= submitEnd);
    const after = starts.filter((s) => s.dueAt > submitEnd);
    const show = (name: string, list: Start[]) => {
      const p = percentiles(list.map((s) => s.at - s.dueAt));
      console.log(`${name.padEnd(30)} ${String(list.length).padStart(6)} tasks, late p50/p99/max ms ${p.p50}/${p.p99}/${p.max}`);
    };
    console.log(`submit took ${submitEnd - submitStart} ms`);
    show('due during the submit', during);
    show('due after it', after);
    show('all', starts);
    const late = starts.filter((s) => s.at - s.dueAt > 3);
    const buckets = new Map<number, number>();
    for (const s of late) {
      const at = Math.floor((s.dueAt - submitStart) / 100) * 100;
      buckets.set(at, (buckets.get(at) ?? 0) + 1);
    }
    console.log(`more than 3 ms late: ${late.length}; by due time after the submit began (100 ms buckets):`);
    console.log([...buckets].sort((a, b) => a[0] - b[0]).map(([at, count]) => `${at}: ${count}`).join(', '));
    }
  } finally {
    await system.close();
  }
});
