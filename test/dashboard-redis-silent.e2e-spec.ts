/**
 * The dashboard over HTTP while Redis is silent: the page's 2 s refresh gets typed 503s within the bound and
 * does not pile up requests; the API answers again by itself once Redis is back.
 *
 * Failure matrix cells (docs/failure-matrix.md, section 2, "Redis paused (SIGSTOP)" and "Redis black-holed
 * by a proxy", over HTTP): a dashboard app (redisTimeoutMs 1 s, a delay worker beside it) on a redis-server of
 * this file's own, reached through test/support/tcp-proxy.ts; a signed-in client polls as the page does (the
 * overview and a type's listing every 2 s, each poll sent whatever the previous ones are doing) for 20 s:
 * | Redis is…                         | checked                                                              |
 * | paused (SIGSTOP) for the 20 s     | each answer a 503 `RedisUnavailableError` within redisTimeoutMs + 1.5 s; at most 4 requests in flight and 6 sockets open on the server at any time; after SIGCONT the same session gets 200s by itself |
 * | black-holed by the proxy (`stall`) | the same, after `stall(false)` (no connection cut by the test)     |
 * Both cases run at once (each on its own server, proxy and app) to keep the file short.
 */
import type { INestApplication } from '@nestjs/common';
import { signIn, startDashboard, TOKEN } from './support/dashboard';
import { workerClass } from './support/queue-app';
import { startRedisServer } from './support/redis-server';
import { uniquePrefix } from './support/targets';
import { startTcpProxy } from './support/tcp-proxy';
import { sleep, waitFor } from './support/wait';

const BOUND_MS = 1000;
/** The bound plus room for a loaded machine's event loop. */
const SETTLED_MS = BOUND_MS + 1500;
const POLL_EVERY_MS = 2000;
const POLL_FOR_MS = 20_000;

interface Answer {
  path: string;
  status: number;
  name?: string;
  ms: number;
}

/** Open sockets of the app's HTTP server. */
function openSockets(app: INestApplication): Promise<number> {
  const server = app.getHttpServer() as { getConnections(cb: (error: Error | null, count: number) => void): void };
  return new Promise((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

describe('the dashboard over HTTP while Redis is silent', () => {
  it.concurrent.each(['paused (SIGSTOP)', 'black-holed by a proxy'])(
    '%s: each request of a 2 s refresh answers a typed 503 within the bound, none pile up, and the API answers again by itself',
    async (how) => {
      const server = await startRedisServer();
      const proxy = await startTcpProxy({ port: server.port });
      const prefix = uniquePrefix('dash-silent');
      const type = 'ds.delay';
      let app: INestApplication | undefined;
      try {
        const dash = await startDashboard(
          { connection: `redis://127.0.0.1:${proxy.port}`, keyPrefix: prefix, redisTimeoutMs: BOUND_MS },
          { token: TOKEN },
          [workerClass(type, {}, () => undefined)],
        );
        app = dash.app;
        const { cookie } = await signIn(dash.call);
        const paths = ['/api/overview', `/api/types/${type}/tasks?state=ready&limit=50`];
        for (const path of paths) expect((await dash.call(path, { headers: { cookie } })).status).toBe(200);

        if (how.startsWith('paused')) server.kill('SIGSTOP');
        else proxy.stall(true);

        const answers: Answer[] = [];
        let inFlight = 0;
        let maxInFlight = 0;
        let maxSockets = 0;
        const request = async (path: string): Promise<void> => {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          const started = performance.now();
          try {
            const res = await dash.call(path, { headers: { cookie }, signal: AbortSignal.timeout(30_000) });
            const body = (await res.json().catch(() => undefined)) as { error?: { name?: string } } | undefined;
            answers.push({ path, status: res.status, name: body?.error?.name, ms: Math.round(performance.now() - started) });
          } catch (error) {
            answers.push({ path, status: -1, name: (error as Error).name, ms: Math.round(performance.now() - started) });
          } finally {
            inFlight--;
          }
        };
        const sent: Promise<void>[] = [];
        const until = performance.now() + POLL_FOR_MS;
        while (performance.now() < until) {
          // As the page does: every 2 s, without waiting for the answers of the previous refresh.
          for (const path of paths) sent.push(request(path));
          for (let waited = 0; waited < POLL_EVERY_MS; waited += 250) {
            maxSockets = Math.max(maxSockets, await openSockets(dash.app));
            await sleep(250);
          }
        }
        await Promise.all(sent);

        expect(answers.length).toBe(2 * Math.ceil(POLL_FOR_MS / POLL_EVERY_MS));
        for (const answer of answers) {
          expect({ ...answer, ms: undefined }).toEqual({ path: answer.path, status: 503, name: 'RedisUnavailableError', ms: undefined });
          expect({ path: answer.path, settled: answer.ms < SETTLED_MS, ms: answer.ms }).toEqual({ path: answer.path, settled: true, ms: answer.ms });
        }
        expect(maxInFlight).toBeLessThanOrEqual(4);
        expect(maxSockets).toBeLessThanOrEqual(6);

        if (how.startsWith('paused')) server.kill('SIGCONT');
        else proxy.stall(false);
        // The same session, once Redis answers again: no restart, no new sign-in, no connection cut by the test.
        await waitFor(async () => {
          for (const path of paths) if ((await dash.call(path, { headers: { cookie } })).status !== 200) return false;
          return true;
        }, { timeoutMs: 15_000, intervalMs: 250, message: 'the API answers again' });
        expect(await openSockets(dash.app)).toBeLessThanOrEqual(6);
      } finally {
        server.kill('SIGCONT');
        proxy.stall(false);
        await app?.close();
        await proxy.close();
        await server.remove();
      }
    },
    60_000,
  );
});
