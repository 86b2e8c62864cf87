/**
 * The worker process of `npm run bench:profile`: processes what the parent submitted, at concurrency 50,
 * and prints its own CPU time per task, counted from the first task start (Nest's bootstrap is not per-task
 * work). With a profile path it also records a V8 CPU profile of that same span and writes it there.
 */
import 'reflect-metadata';
import * as fs from 'fs';
import { Session } from 'inspector';
import { TaskHistoryService } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass } from '../../test/support/queue-app';
import { historyBackendsCpu, OBSERVED, observabilityOptions, type Observability } from '../observability';

function post<T>(session: Session, method: string): Promise<T> {
  return new Promise((resolve, reject) => session.post(method, (error, result) => (error ? reject(error) : resolve(result as T))));
}

async function main(): Promise<void> {
  const [url, prefix, countText, observed, profilePath] = process.argv.slice(2);
  const n = Number(countText);
  const session = new Session();
  if (profilePath) {
    session.connect();
    await post(session, 'Profiler.enable');
  }
  if (process.env.DQ_TRACE) (globalThis as any).__trace = [];
  let done = 0;
  let finished!: () => void;
  const all = new Promise<void>((resolve) => (finished = resolve));
  let cpu0 = process.cpuUsage();
  let pgCpu0: Promise<number> | undefined;
  let t0 = performance.now();
  const W = workerClass('bench', { concurrency: 50 }, () => {
    if (done === 0) {
      [cpu0, t0] = [process.cpuUsage(), performance.now()];
      if (observed === 'history') pgCpu0 = historyBackendsCpu();
      if (profilePath) session.post('Profiler.start');
    }
    if (++done === n) finished();
  });
  const options = observabilityOptions(observed as Observability);
  const app = await startQueueApp({ connection: url, keyPrefix: prefix, ...options }, [W, ...(OBSERVED[observed as Observability].providers as never[])]);
  await all;
  const seconds = (performance.now() - t0) / 1000;
  // NOTE: with the history on, the rows are written after the tasks ran: its CPU counts until they are in
  // PostgreSQL (the writer's own cost per task), and the time to that point is reported apart.
  if (observed === 'history') await app.app.get(TaskHistoryService).flush({ timeoutMs: 600_000 });
  const written = (performance.now() - t0) / 1000;
  // PostgreSQL's side: its backends' CPU from the first task start (the tables' creation before it left out)
  const pgMicros = pgCpu0 ? ((await historyBackendsCpu()) - (await pgCpu0)) * 1e6 : undefined;
  if (process.env.DQ_TRACE) fs.writeFileSync(process.env.DQ_TRACE, JSON.stringify((globalThis as any).__trace));
  const cpu = process.cpuUsage(cpu0);
  if (profilePath) fs.writeFileSync(profilePath, JSON.stringify((await post<{ profile: unknown }>(session, 'Profiler.stop')).profile));
  await app.close();
  const us = (cpu.user + cpu.system) / n;
  process.stdout.write(JSON.stringify({ n, seconds, perSecond: Math.round(n / seconds), writtenSeconds: Number(written.toFixed(2)), cpuMicrosPerTask: Number(us.toFixed(1)), userMicros: Number((cpu.user / n).toFixed(1)), systemMicros: Number((cpu.system / n).toFixed(1)), ...(pgMicros === undefined ? {} : { postgresMicrosPerTask: Number((pgMicros / n).toFixed(1)) }) }) + '\n');
  process.exit(0);
}

void main();
