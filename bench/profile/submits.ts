/**
 * `npm run bench:profile:submits [-- --count=N --mode=plain|drop|debounce --system=ours|bullmq --cpu-prof]`:
 * N single `submit` calls (100 in flight, each due in a minute) from this process, as workload 18 makes them,
 * then submits/s, this process's Node CPU per submit and Redis's CPU per submit (by command). With
 * `--cpu-prof` a V8 profile of the submits is written into bench/profile/out/ and its heaviest functions printed.
 */
import 'reflect-metadata';
import * as fs from 'fs';
import * as path from 'path';
import { Session } from 'inspector';
import type { Queue } from 'bullmq';
import { startQueueApp } from '../../test/support/queue-app';
import { bullQueue } from '../systems';
import { payload } from '../stats';
import { arg, commandCosts, withServer } from './args-and-costs';
import { topSelfTime, topTotalTime } from './top';

const IN_FLIGHT = 100;

/** Runs `body` under the V8 profiler (when `file` is given), writing the profile there. */
async function profiled(file: string | undefined, body: () => Promise<void>): Promise<void> {
  if (!file) return body();
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
  await body();
  const { profile } = (await post('Profiler.stop')) as { profile: unknown };
  fs.writeFileSync(file, JSON.stringify(profile));
  session.disconnect();
}

withServer(async (url, redis) => {
  const n = Number(arg('count', '20000'));
  const mode = arg('mode', 'plain');
  const system = arg('system', 'ours');
  const keys = Math.min(1000, n);
  const prefix = `subp${Date.now()}`;
  let submit: (i: number) => Promise<unknown>;
  let close: () => Promise<unknown>;
  if (system === 'bullmq') {
    const { queue } = bullQueue(url, prefix) as { queue: Queue };
    const dedup = (k: string) => (mode === 'drop' ? { id: k } : { id: k, ttl: 60_000, extend: true, replace: true });
    submit = (i) => queue.add('p', payload(i), { delay: 60_000, ...(mode === 'plain' ? {} : { deduplication: dedup(`k${i % keys}`) }) });
    close = () => queue.close();
  } else {
    const app = await startQueueApp({ connection: url, keyPrefix: prefix, workers: false, types: { p: {} } });
    const dedupe = (i: number) => ({ key: `k${i % keys}`, mode: mode as 'drop' | 'debounce' });
    submit = (i) => app.submit.submit('p', payload(i), { delay: 60_000, ...(mode === 'plain' ? {} : { dedupe: dedupe(i) }) });
    close = () => app.close();
  }
  try {
    for (let i = 0; i < 2000; i++) await submit(i); // warm-up: JIT, script loading
    await redis.config('RESETSTAT');
    const file = process.argv.includes('--cpu-prof') ? path.join(__dirname, 'out', `submits-${system}-${mode}-${Date.now()}.cpuprofile`) : undefined;
    if (file) fs.mkdirSync(path.dirname(file), { recursive: true });
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await profiled(file, async () => {
      let next = 0;
      await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
        while (next < n) await submit(next++);
      }));
    });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    console.log(`${system} ${mode}: ${Math.round(n / seconds)} submits/s, Node CPU ${((cpu.user + cpu.system) / n).toFixed(1)} µs/submit`);
    console.log(`redis CPU by command, per submit:\n${commandCosts(await redis.info('commandstats'), n, 20)}`);
    if (file) {
      const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
      console.log(`\nself time:\n${topSelfTime(profile, 25)}`);
      console.log(`\ntotal time (libs):\n${topTotalTime(profile, 25, /libs\//)}`);
    }
  } finally {
    await close();
  }
});
