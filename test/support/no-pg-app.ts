/**
 * An application instance started where pg may not resolve (preload test/support/block-pg.js): reports over
 * IPC whether pg resolves ('probe'), then starts with or without the `history` option; without it, runs one
 * task and asks for a history row ('ran': the task, the row's error, the attempts to load pg), with it,
 * reports the start-up error ('start-failed').
 * env: DQ_CONNECTION (JSON), DQ_PREFIX, DQ_HISTORY ('on' | 'off')
 */
import 'reflect-metadata';
import { TaskHistoryService, type InvalidOptionsError, type Task } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass } from './queue-app';

const send = (message: object): void => void process.send?.(message);
const pgRequests = (): string[] => [...((globalThis as { __dqPgRequests?: string[] }).__dqPgRequests ?? ['no hook'])];

async function main(): Promise<void> {
  // What tried to load pg so far: the library's modules are loaded (imported above).
  const atLoad = pgRequests();
  let pg = true;
  try {
    require.resolve('pg');
  } catch {
    pg = false;
  }
  send({ type: 'probe', pg });
  let ran: (task: Task) => void = () => undefined;
  const done = new Promise<Task>((resolve) => (ran = resolve));
  const Worker = workerClass('np', { pollIntervalMs: 100 }, (task: Task) => ran(task));
  const options = { connection: JSON.parse(process.env.DQ_CONNECTION!), keyPrefix: process.env.DQ_PREFIX! };
  const before = pgRequests().length;
  let app;
  try {
    app = await startQueueApp(process.env.DQ_HISTORY === 'on' ? { ...options, history: { connection: 'postgres://postgres@127.0.0.1:1/none' } } : options, [Worker]);
  } catch (error) {
    const { name, message, option } = error as InvalidOptionsError;
    send({ type: 'start-failed', name, message, option });
    return;
  }
  const id = await app.submit.submit('np', { hello: 1 });
  const task = await done;
  const rowError = await app.app.get(TaskHistoryService).getHistory('np', id).then(() => null, (error: Error) => error.name);
  send({ type: 'ran', id: task.id, submitted: id, rowError, pgRequests: [...atLoad, ...pgRequests().slice(before)] });
  await app.close();
}

main().then(
  // The last IPC message is flushed before the exit.
  () => process.send?.({ type: 'exit' }, () => process.exit(0)),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
