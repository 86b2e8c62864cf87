import type { Task } from '../interfaces';
import { DeliveryRunner, type DeliveryTarget } from './delivery-runner';
import { signDelivery, type DeliveryResult } from './delivery-signature';
import { memoryReplayGuard } from './replay-guard';

const secret = 'shared-secret';
let n = 0;
/** A signed request carrying one task of each of `types`. */
const request = (types: string[], payload: unknown = {}) => {
  const body = JSON.stringify({ deliveries: types.map((type) => ({ type, id: `t${++n}`, attempt: 1, dueAt: 5, payload, timeoutMs: 1000 })) });
  return { body, headers: signDelivery(secret, Date.now(), `batch:${n}`, body) };
};

/** Accepts a request and runs it: the refusal, or each task's result in the order they ended. */
async function run(runner: DeliveryRunner, headers: Record<string, string>, body: string): Promise<unknown> {
  const accepted = await runner.accept(headers, body);
  if (!Array.isArray(accepted)) return accepted;
  const results: DeliveryResult[] = [];
  await runner.runAll(accepted, (r) => results.push(r));
  return results;
}

describe('DeliveryRunner', () => {
  const ran: Task[] = [];
  const targets: Record<string, DeliveryTarget> = {
    ok: {
      handler: {
        handle: (task: Task) => {
          ran.push(task);
          return { echoed: task.payload };
        },
      },
      timeoutMs: 1000,
    },
    fails: { handler: { handle: async () => { throw new RangeError('no stock'); } }, timeoutMs: 1000 },
    slow: {
      handler: { handle: (_task: Task, signal: AbortSignal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))) },
      timeoutMs: 50,
    },
  };
  const runner = () => new DeliveryRunner(secret, (type) => targets[type], memoryReplayGuard());

  beforeEach(() => (ran.length = 0));

  it('runs a signed request with the Task of plugin mode, reporting 200 with the result', async () => {
    const { body, headers } = request(['ok'], { a: 1 });
    expect(await run(runner(), headers, body)).toEqual([{ i: 0, status: 200, result: { echoed: { a: 1 } } }]);
    expect(ran).toEqual([{ id: `t${n}`, type: 'ok', payload: { a: 1 }, attempt: 1, dueAt: 5 }]);
  });

  it('a bad signature or a replayed request gets 401 and runs nothing', async () => {
    const r = runner();
    const { body, headers } = request(['ok']);
    expect(await run(r, { ...headers, 'x-dq-signature': `v1=${'0'.repeat(64)}` }, body)).toMatchObject({ status: 401 });
    expect(ran).toHaveLength(0);
    expect(await run(r, headers, body)).toMatchObject([{ status: 200 }]);
    expect(await run(r, headers, body)).toEqual({ status: 401, body: { ok: false, error: { name: 'Unauthorized', message: 'replayed delivery' } } });
    expect(ran).toHaveLength(1);
  });

  it('runs the tasks of one request at once, each reported as it ends: 200, 500 with the error, 504 past its timeout, 404', async () => {
    const { body, headers } = request(['slow', 'fails', 'ok', 'nobody']);
    const results = (await run(runner(), headers, body)) as DeliveryResult[];
    // NOTE: the slow one is reported last, after its timeout; the others as soon as they ended.
    expect(results.slice(0, 3).map((r) => r.i).sort()).toEqual([1, 2, 3]);
    expect(results).toEqual(expect.arrayContaining([
      // the handler's stack goes back with its error (bounded, see MAX_STACK_BYTES)
      { i: 1, status: 500, error: { name: 'RangeError', message: 'no stock', stack: expect.stringMatching(/^RangeError: no stock\n {4}at /) } },
      { i: 2, status: 200, result: { echoed: {} } },
      { i: 3, status: 404, error: { name: 'UnknownTaskType', message: 'no @TaskWorker for "nobody" in this application' } },
    ]));
    expect(results[3]).toMatchObject({ i: 0, status: 504, error: { name: 'TaskTimeoutError' } });
  });

  it('refuses a body that is not JSON or not a list of tasks with 400', async () => {
    const text = 'not json';
    expect(await run(runner(), signDelivery(secret, Date.now(), 'd1', text), text)).toMatchObject({ status: 400 });
    const wrong = JSON.stringify({ deliveries: [{ type: 'ok' }] });
    expect(await run(runner(), signDelivery(secret, Date.now(), 'd2', wrong), wrong)).toMatchObject({ status: 400 });
    expect(ran).toHaveLength(0);
  });
});

describe('memoryReplayGuard', () => {
  it('sees an id once until it expires; keeps at most max ids', async () => {
    const guard = memoryReplayGuard(2);
    expect(await guard.firstSeen('a', 60_000)).toBe(true);
    expect(await guard.firstSeen('a', 60_000)).toBe(false);
    expect(await guard.firstSeen('b', 1)).toBe(true);
    await new Promise((r) => setTimeout(r, 5));
    expect(await guard.firstSeen('b', 60_000)).toBe(true);
    await guard.firstSeen('c', 60_000);
    // a was the oldest past the bound of 2: forgotten.
    expect(await guard.firstSeen('a', 60_000)).toBe(true);
  });
});
