import type { Task } from '../interfaces';
import { DeliveryRunner, type DeliveryTarget } from './delivery-runner';
import { signDelivery } from './delivery-signature';
import { memoryReplayGuard } from './replay-guard';

const secret = 'shared-secret';
let n = 0;
const delivery = (type: string, payload: unknown = {}, timeoutMs = 1000) => {
  const body = JSON.stringify({ type, id: `t${++n}`, attempt: 1, dueAt: 5, payload, timeoutMs });
  return { body, headers: signDelivery(secret, Date.now(), `${type}:t${n}:1:x`, body) };
};

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

  it('runs a signed delivery with the Task of plugin mode, answering 200 with the result', async () => {
    const { body, headers } = delivery('ok', { a: 1 });
    expect(await runner().run(headers, body)).toEqual({ status: 200, body: { ok: true, result: { echoed: { a: 1 } } } });
    expect(ran).toEqual([{ id: `t${n}`, type: 'ok', payload: { a: 1 }, attempt: 1, dueAt: 5 }]);
  });

  it('a bad signature or a replayed delivery gets 401 and runs nothing', async () => {
    const r = runner();
    const { body, headers } = delivery('ok');
    expect((await r.run({ ...headers, 'x-dq-signature': `v1=${'0'.repeat(64)}` }, body)).status).toBe(401);
    expect(ran).toHaveLength(0);
    expect((await r.run(headers, body)).status).toBe(200);
    const replayed = await r.run(headers, body);
    expect(replayed).toEqual({ status: 401, body: { ok: false, error: { name: 'Unauthorized', message: 'replayed delivery' } } });
    expect(ran).toHaveLength(1);
  });

  it('a failing handler answers 500 with its error; one past its timeout is aborted and answers 504', async () => {
    const failed = delivery('fails');
    expect(await runner().run(failed.headers, failed.body)).toEqual({ status: 500, body: { ok: false, error: { name: 'RangeError', message: 'no stock' } } });
    const slow = delivery('slow');
    const answer = await runner().run(slow.headers, slow.body);
    expect(answer).toMatchObject({ status: 504, body: { error: { name: 'TaskTimeoutError' } } });
  });

  it('an unknown type answers 404; a body that is not JSON 400', async () => {
    const unknown = delivery('nobody');
    expect((await runner().run(unknown.headers, unknown.body)).status).toBe(404);
    const text = 'not json';
    expect((await runner().run(signDelivery(secret, Date.now(), 'd', text), text)).status).toBe(400);
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
