import type { Queue } from 'bullmq';
import { startQueueApp } from '../test/support/queue-app';
import type { Row } from './report';
import { bullQueue } from './systems';

/** Submits in flight at once, per system. */
const IN_FLIGHT = 100;

/** One system of workload 18: submits with a dedupe key, then what stands. */
interface DedupeSystem {
  name: string;
  submit(key: string, n: number, mode: 'drop' | 'debounce'): Promise<unknown>;
  /** The waiting tasks: each one's payload. */
  standing(): Promise<{ k: string; n: number }[]>;
  close(): Promise<void>;
}

async function ours(url: string, prefix: string): Promise<DedupeSystem> {
  const app = await startQueueApp({ connection: url, keyPrefix: prefix, workers: false, types: { dd: {} } });
  return {
    name: 'this library',
    submit: (key, n, mode) => app.submit.submit('dd', { k: key, n }, { delay: 60_000, dedupe: { key, mode } }),
    async standing() {
      const tasks = await app.inspect.listTasks('dd', 'delayed', { limit: 1000 });
      return tasks.map((t) => t.payload as { k: string; n: number });
    },
    close: () => app.close(),
  };
}

/** BullMQ's deduplication: `{ id }` (simple mode); debounce as its docs give it: `{ id, ttl, extend, replace }`. */
function bull(url: string, name: string): DedupeSystem {
  const { queue } = bullQueue(url, name) as { queue: Queue };
  return {
    name: 'bullmq',
    submit: (key, n, mode) =>
      queue.add('dd', { k: key, n }, { delay: 60_000, deduplication: mode === 'drop' ? { id: key } : { id: key, ttl: 60_000, extend: true, replace: true } }),
    async standing() {
      return (await queue.getDelayed(0, 999)).map((job) => job.data as { k: string; n: number });
    },
    close: () => queue.close(),
  };
}

/**
 * 18. Dedupe: `rounds` rounds of one submit per key (`keys` keys, IN_FLIGHT submits at once), each task due
 * in a minute. `drop`: the first submit of a key makes its task, the others add nothing; `debounce`: each
 * submit replaces the waiting task's payload (and due time). Reported: submits per second, the tasks that
 * stand (must be one per key), and for debounce the keys whose task holds the last round's payload.
 */
export async function dedupe(url: string, quick: boolean, flush: () => Promise<unknown>): Promise<Row[]> {
  const keys = quick ? 200 : 1000;
  const rounds = quick ? 10 : 20;
  const rows: Row[] = [];
  for (const mode of ['drop', 'debounce'] as const) {
    for (const make of [() => ours(url, `dd${Date.now()}`), async () => bull(url, `dd${Date.now()}`)]) {
      await flush();
      const system = await make();
      try {
        const t0 = performance.now();
        for (let round = 0; round < rounds; round++) {
          let next = 0;
          await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
            while (next < keys) {
              const k = next++;
              await system.submit(`key-${k}`, round, mode);
            }
          }));
        }
        const seconds = (performance.now() - t0) / 1000;
        const standing = await system.standing();
        const last = mode === 'debounce' ? standing.filter((p) => p.n === rounds - 1).length : undefined;
        rows.push({
          workload: `18. dedupe (${mode}), ${rounds} submits × ${keys} keys, ${IN_FLIGHT} in flight`,
          system: system.name,
          figures: {
            'submits/s': Math.round((keys * rounds) / seconds),
            'tasks standing': standing.length,
            ...(last === undefined ? {} : { 'with the last payload': last }),
          },
          key: { name: 'submits/s', value: (keys * rounds) / seconds },
        });
      } finally {
        await system.close();
      }
    }
  }
  return rows;
}
