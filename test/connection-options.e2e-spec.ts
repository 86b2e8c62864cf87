import 'reflect-metadata';
import { Redis } from 'ioredis';
import { InvalidOptionsError, type DistributedQueueModuleOptions, type Task } from 'nestjs-distributed-queue';
import { startQueueApp, workerClass, type QueueApp } from './support/queue-app';
import { HOST, startRedisServer, type RedisServerHandle } from './support/redis-server';
import { errorReplies } from './support/redis-stats';
import { uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

/** Connections the server accepted since it started (INFO stats), asked on `admin`'s own connection. */
async function connectionsReceived(admin: Redis): Promise<number> {
  return Number(/total_connections_received:(\d+)/.exec(await admin.info('stats'))?.[1]);
}

/** Starts an application and expects start-up to fail with InvalidOptionsError naming `option`. */
async function expectRefused(options: DistributedQueueModuleOptions, option: string, message: RegExp, workers = true): Promise<number> {
  const started = Date.now();
  const type = `${options.keyPrefix}.t`;
  const start = startQueueApp({ ...options, ...(workers ? {} : { workers: false, types: { [type]: {} } }) },
    workers ? [workerClass(type, { pollIntervalMs: 100 }, () => undefined)] : []);
  const error = await start.then(
    async (app) => {
      await app.close();
      throw new Error(`started with ${JSON.stringify(options.connection)}`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidOptionsError);
  expect((error as InvalidOptionsError).option).toBe(option);
  expect((error as Error).message).toMatch(message);
  return Date.now() - started;
}

describe('connection options', () => {
  let server: RedisServerHandle;
  let admin: Redis;
  beforeAll(async () => {
    server = await startRedisServer({ extraArgs: ['--databases', '4'] });
    admin = new Redis({ host: HOST, port: server.port, maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.remove();
  });

  it('refuses a misspelled or unknown connection key before any connection is made', async () => {
    const before = await connectionsReceived(admin);
    const keyPrefix = uniquePrefix('conn-opts');
    const cases: [DistributedQueueModuleOptions['connection'], string, RegExp][] = [
      [{ host: HOST, prot: server.port } as never, 'connection.prot', /unknown option of ioredis \(did you mean port\?\)/],
      [{ url: server.url } as never, 'connection.url', /give a URL as the connection itself/],
      [{ sentinel: [{ host: HOST, port: server.port }], name: 'm' } as never, 'connection.sentinel', /did you mean sentinels\?/],
      [{ cluster: [{ hots: HOST, port: server.port }] } as never, 'connection.cluster[0].hots', /did you mean host\?/],
      [{ cluster: [`${HOST}:${server.port}`], clusterOptions: { redisOptions: { db: 1 } } }, 'connection.clusterOptions.redisOptions.db', /only database 0/],
      [{ host: HOST, port: 70000 }, 'connection.port', /from 1 to 65535, got 70000/],
      [{ host: HOST, port: server.port, db: Number.NaN }, 'connection.db', /got NaN/],
      [{ host: HOST, port: server.port, connectTimeout: Infinity }, 'connection.connectTimeout', /got Infinity/],
      [`${server.url}/one`, 'connection', /database number/],
    ];
    for (const [connection, option, message] of cases) {
      for (const workers of [true, false]) {
        const ms = await expectRefused({ connection, keyPrefix }, option, message, workers);
        // NOTE: the check runs before any connection; a few seconds of margin for a loaded machine (ioredis
        // would retry for 10 s or more before failing on its own).
        expect(ms).toBeLessThan(5000);
      }
    }
    // Only this test's admin connection: the library opened none.
    expect(await connectionsReceived(admin)).toBe(before);
    expect(await admin.dbsize()).toBe(0);
  });

  it.each([
    ['the db option', (s: RedisServerHandle) => ({ host: HOST, port: s.port, db: 9 }), 'connection.db'],
    ['the URL path', (s: RedisServerHandle) => `${s.url}/9`, 'connection'],
  ])('fails start-up on a database index the server refuses (%s), writing nothing to DB 0', async (_label, connection, option) => {
    for (const workers of [true, false]) {
      const ms = await expectRefused({ connection: connection(server), keyPrefix: uniquePrefix('conn-db') }, option, /server refused SELECT 9.*DB index is out of range/, workers);
      // NOTE: one connection and one refused SELECT; a wide margin for a loaded machine (the bug: start-up
      // went on in DB 0, or hung until ioredis gave up).
      expect(ms).toBeLessThan(10_000);
    }
    expect(await admin.dbsize()).toBe(0);
  });

  describe('after a reconnect to a server that refuses the database', () => {
    let app: QueueApp | undefined;
    let other: RedisServerHandle | undefined;
    afterEach(async () => {
      await app?.close();
      await other?.remove();
    });

    it('neither runs nor writes anything in DB 0, and carries on in its database once the server takes it again', async () => {
      other = await startRedisServer({ extraArgs: ['--databases', '16'] });
      const port = other.port;
      const keyPrefix = uniquePrefix('conn-reselect');
      const ran: string[] = [];
      app = await startQueueApp({ connection: { host: HOST, port, db: 9 }, keyPrefix },
        [workerClass(`${keyPrefix}.t`, { pollIntervalMs: 100 }, (task: Task) => void ran.push(task.id))]);
      await app.submit.submit(`${keyPrefix}.t`, {}, { id: 'before' });
      await waitFor(() => ran.includes('before'), { timeoutMs: 10_000, message: 'ran before' });

      // The same address, now a server of 4 databases: SELECT 9 fails on every reconnect.
      await other.remove();
      other = await startRedisServer({ port, extraArgs: ['--databases', '4'] });
      const check = new Redis({ host: HOST, port, maxRetriesPerRequest: 1 });
      try {
        const during = app.submit.submit(`${keyPrefix}.t`, {}, { id: 'during' }).catch((e: Error) => e);
        // Several reconnects, each refused (ioredis retries every 50..2000 ms): ample chances to write to DB 0.
        await waitFor(async () => (await errorReplies(check, 'ERR')) >= 3, { timeoutMs: 20_000, message: 'SELECT 9 refused 3 times' });
        expect(await check.dbsize()).toBe(0);
        expect(ran).not.toContain('during');

        // Back to a server that has database 9 (empty: a new one).
        check.disconnect();
        await other.remove();
        other = await startRedisServer({ port, extraArgs: ['--databases', '16'] });
        const outcome = await during;
        // NOTE: until ioredis has reconnected (its retry delay is up to 2 s) a call fails at once, as the
        // README says: submit again until it is taken.
        await waitFor(() => app!.submit.submit(`${keyPrefix}.t`, {}, { id: 'after' }).then(() => true, () => false), { timeoutMs: 15_000, intervalMs: 200, message: 'submit taken again' });
        await waitFor(() => ran.includes('after'), { timeoutMs: 15_000, message: 'ran after' });
        const fresh = new Redis({ host: HOST, port, maxRetriesPerRequest: 1 });
        try {
          expect(await fresh.dbsize()).toBe(0);
          await fresh.select(9);
          expect(await fresh.dbsize()).toBeGreaterThan(0);
        } finally {
          fresh.disconnect();
        }
        // The submit made while the database was refused either ran in DB 9 or failed; never in DB 0.
        if (outcome instanceof Error) expect(ran).not.toContain('during');
      } finally {
        check.disconnect();
      }
    });
  });
});
