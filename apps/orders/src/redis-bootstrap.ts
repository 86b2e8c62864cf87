import * as fs from 'fs';
import * as path from 'path';
import type { Logger } from '@nestjs/common';
import { intFromEnv, redactUrl } from './env';
import { startLocalRedis } from './local-redis-server';
import { pingRedis } from './redis-ping';

export { RedisServerNotInstalledError } from './local-redis-server';

export interface ResolvedRedis {
  url: string;
  /** Where the URL came from. */
  source: 'REDIS_URL' | 'probe' | 'local';
  /** Stops the redis-server this process started; a no-op otherwise. Idempotent. */
  stop(): Promise<void>;
}

const PROBE_TIMEOUT_MS = 500;

/** The folder holding package.json above this file (works from apps/ and from dist/apps/). */
function repoRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return process.cwd();
  }
}

/**
 * Finds a Redis for the app:
 *  1. env REDIS_URL, as given;
 *  2. else a server answering PING on REDIS_PROBE_HOST:REDIS_PROBE_PORT (default 127.0.0.1:6379) within 500 ms;
 *  3. else a redis-server started here on 127.0.0.1:LOCAL_REDIS_PORT (default 6390), data in <repo>/.redis-data/.
 * @throws RedisServerNotInstalledError in case 3 when redis-server is not installed
 */
export async function resolveRedis(logger: Logger): Promise<ResolvedRedis> {
  const noop = async (): Promise<void> => undefined;
  const fromEnv = process.env.REDIS_URL?.trim();
  if (fromEnv) {
    logger.log(`Using Redis from REDIS_URL: ${redactUrl(fromEnv)}`);
    return { url: fromEnv, source: 'REDIS_URL', stop: noop };
  }

  const host = process.env.REDIS_PROBE_HOST?.trim() || '127.0.0.1';
  const port = intFromEnv('REDIS_PROBE_PORT', 6379, 1, 65535);
  const reply = await pingRedis(host, port, PROBE_TIMEOUT_MS);
  if (reply === '+PONG') {
    logger.log(`Using the Redis that answered PING on ${host}:${port}`);
    return { url: `redis://${host}:${port}`, source: 'probe', stop: noop };
  }
  logger.log(
    reply
      ? `Redis on ${host}:${port} answered PING with "${reply}" (set REDIS_URL with credentials to use it); starting a local redis-server`
      : `No Redis answered PING on ${host}:${port} within ${PROBE_TIMEOUT_MS} ms; starting a local redis-server`,
  );

  const localPort = intFromEnv('LOCAL_REDIS_PORT', 6390, 1, 65535);
  const local = await startLocalRedis(localPort, path.join(repoRoot(), '.redis-data'), logger);
  return { url: local.url, source: 'local', stop: local.stop };
}
