/**
 * The conformance suite's Redis engine: one Nest application context (test/support/queue-app.ts) on a
 * target of the global setup, under a key prefix of its own. `advance` waits real time, `settle` polls the
 * public counts.
 */
import { TaskScheduleService, type TaskCounts } from 'nestjs-distributed-queue';
import { startQueueApp } from '../support/queue-app';
import { uniquePrefix, type RedisTarget } from '../support/targets';
import { sleep } from '../support/wait';
import type { Engine, EngineFactory } from './engine';

/** How long `settle` waits for the types to go quiet. */
const SETTLE_TIMEOUT_MS = 10_000;
/** Between two readings of the counts. */
const SETTLE_POLL_MS = 20;
/**
 * Quiet readings in a row before `settle` returns (so it takes at least 2 × SETTLE_POLL_MS): the local events
 * of an attempt come after the reply of the call that ended it, which may reach the worker just after the
 * counts' reply reached `settle`; and a `submitAndWait` started just before `settle` subscribes before it
 * submits.
 */
const QUIET_READINGS = 3;

export function redisEngine(target: RedisTarget): EngineFactory {
  return {
    name: target.name,
    async start(options, workers) {
      const app = await startQueueApp(
        // NOTE: a test that ends with a handler still hanging would hold close() for the default 10 s.
        { shutdownTimeoutMs: 1000, ...options, connection: target.connection, keyPrefix: uniquePrefix(`cf-${target.name}`) },
        workers,
      );
      const { submit, inspect, control } = app;

      /** Why `types` are not quiet yet (null: quiet). */
      const busy = async (types: string[]): Promise<string | null> => {
        const ordered = new Set(inspect.listTypes().filter((t) => t.ordered).map((t) => t.type));
        const readings = await Promise.all(types.map(async (type) => {
          const [counts, paused] = await Promise.all([inspect.getCounts(type), control.isPaused(type)]);
          // A delayed ordered task that fell due waits for the mover (a task of an internal type) to enter its
          // partition; its type's counts show it as delayed meanwhile.
          const dueOrdered = ordered.has(type) && counts.delayed > 0
            ? (await inspect.listTasks(type, 'delayed', { limit: 1000 })).filter((t) => (t.dueAt ?? 0) <= Date.now()).length
            : 0;
          return { type, counts, paused, dueOrdered };
        }));
        const pending = readings.filter(({ counts, paused, dueOrdered }) => counts.running > 0 || (!paused && (counts.ready > 0 || dueOrdered > 0)));
        return pending.length === 0 ? null : pending.map(({ type, counts, paused, dueOrdered }) => `${type}: ${describeCounts(counts)}${paused ? ' (paused)' : ''}${dueOrdered ? `, ${dueOrdered} due ordered not entered` : ''}`).join('; ');
      };

      const settle = async (types: string[]): Promise<void> => {
        const deadline = Date.now() + SETTLE_TIMEOUT_MS;
        let quiet = 0;
        for (;;) {
          const why = await busy(types);
          quiet = why === null ? quiet + 1 : 0;
          if (quiet >= QUIET_READINGS) return;
          if (Date.now() > deadline) throw new Error(`settle(${JSON.stringify(types)}) on ${target.name}: not quiet after ${SETTLE_TIMEOUT_MS} ms: ${why}`);
          await sleep(SETTLE_POLL_MS);
        }
      };

      const engine: Engine = {
        name: target.name,
        submit,
        inspect,
        control,
        schedules: app.app.get(TaskScheduleService),
        async advance(ms: number) {
          if (!Number.isFinite(ms) || ms < 0) throw new Error(`advance(${ms}): a finite number of ms from 0`);
          await sleep(ms);
          await settle(inspect.listTypes().map((t) => t.type));
        },
        settle,
        close: () => app.close(),
      };
      return engine;
    },
  };
}

function describeCounts(counts: TaskCounts): string {
  return `delayed ${counts.delayed}, ready ${counts.ready}, running ${counts.running}, dead ${counts.dead}, done ${counts.done}`;
}
