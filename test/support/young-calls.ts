/**
 * Child of test/young-calls.e2e-spec.ts: an application with a worker makes `submitAndWait` round trips one
 * at a time (REDIS_URL), then, for `SAMPLED` more, asks V8 of every script call's argument list (the array
 * ioredis writes) whether it was allocated in the young generation. Sends `{ type: 'young', total, old }`.
 */
import 'reflect-metadata';
import * as v8 from 'v8';
import { Redis } from 'ioredis';
import type { ActiveTask } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass } from './queue-app';

v8.setFlagsFromString('--allow-natives-syntax');
// NOTE: a Function, not source here: natives syntax parses only in code compiled after the flag is set
const inYoungGeneration = new Function('o', 'return %InYoungGeneration(o)') as (o: unknown) => boolean;

const WARM_UP = Number(process.env.WARM_UP ?? 3000);
const SAMPLED = 1000;

async function main(): Promise<void> {
  let sampling = false;
  let total = 0;
  let old = 0;
  const send = (Redis.prototype as unknown as { sendCommand: (command: { name: string; args: unknown[] }) => unknown }).sendCommand;
  (Redis.prototype as unknown as { sendCommand: typeof send }).sendCommand = function (this: unknown, command) {
    if (sampling && command.name === 'evalsha') {
      total++;
      if (!inYoungGeneration(command.args)) old++;
    }
    return send.call(this, command);
  };
  const W = workerClass('young', { concurrency: 50 }, (task: ActiveTask<{ i: number }>) => ({ i: task.payload.i }));
  const app = await startQueueApp({ connection: process.env.REDIS_URL!, keyPrefix: 'young' }, [W]);
  for (let i = 0; i < WARM_UP + SAMPLED; i++) {
    sampling = i >= WARM_UP;
    await app.submit.submitAndWait('young', { i });
  }
  await app.close();
  process.send!({ type: 'young', total, old }, () => process.exit(0));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
