/**
 * `npm run bench:profile:awaited [-- --count=N --warm-up=N]`: workload 16b (`submitAndWait` one task at a time,
 * producer and worker in one process) with the round trip cut in two: from the call to the handler's start
 * (submit, wake-up, take) and from the handler's end to the result back in the caller (ack, the end's publish,
 * the waiter). Percentiles of each, and of the whole.
 */
import 'reflect-metadata';
import type { ActiveTask } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass } from '../../test/support/queue-app';
import { percentiles } from '../stats';
import { arg, withServer } from './args-and-costs';

withServer(async (url) => {
  const n = Number(arg('count', '3000'));
  const warmUp = Number(arg('warm-up', '1000'));
  let started = 0;
  let ended = 0;
  const W = workerClass('res', { concurrency: 50 }, (task: ActiveTask<{ i: number }>) => {
    started = performance.now();
    const result = { i: task.payload.i, total: task.payload.i * 3 };
    ended = performance.now();
    return result;
  });
  const app = await startQueueApp({ connection: url, keyPrefix: `aw${Date.now()}` }, [W]);
  try {
    const whole: number[] = [];
    const toStart: number[] = [];
    const fromEnd: number[] = [];
    for (let i = 0; i < warmUp + n; i++) {
      const t0 = performance.now();
      await app.submit.submitAndWait('res', { i });
      const t1 = performance.now();
      if (i < warmUp) continue;
      whole.push(t1 - t0);
      toStart.push(started - t0);
      fromEnd.push(t1 - ended);
    }
    const show = (name: string, values: number[]) => {
      const p = percentiles(values);
      console.log(`${name.padEnd(28)} p50/p99/max ms ${p.p50}/${p.p99}/${p.max}`);
    };
    show('call → handler start', toStart);
    show('handler end → result back', fromEnd);
    show('whole', whole);
  } finally {
    await app.close();
  }
});
