#!/usr/bin/env node
/*
 * `npm run start:service`: the orders sample in service mode. Finds a Redis the way `npm start` does (REDIS_URL,
 * else one answering on 127.0.0.1:6379, else a local redis-server), then starts two processes on it:
 *   - the scheduler (apps/scheduler) on SCHEDULER_PORT (default 4000): it holds the delay queue and calls
 *     the application back over HTTP;
 *   - the orders sample in service mode on PORT (default 3000): it submits, registers, and answers.
 * DQ_SERVICE_SECRET and SCHEDULER_API_TOKENS are generated unless set. Ctrl-C (or SIGTERM) stops both, then
 * the local Redis if one was started. Run `npm run build` first (npm's prestart:service does).
 */
const { spawn } = require('child_process');
const { randomBytes } = require('crypto');
const path = require('path');
const { Logger } = require('@nestjs/common');

const root = path.resolve(__dirname, '..');
const logger = new Logger('ServiceMode');

async function main() {
  const { resolveRedis } = require(path.join(root, 'dist/apps/orders/redis-bootstrap.js'));
  const redis = await resolveRedis(logger);
  const secret = process.env.DQ_SERVICE_SECRET || randomBytes(24).toString('hex');
  const token = process.env.SCHEDULER_API_TOKENS || randomBytes(16).toString('hex');
  const common = { ...process.env, REDIS_URL: redis.url, DQ_SERVICE_SECRET: secret, DQ_PREFIX: 'orders-sample' };
  const children = [
    spawn(process.execPath, [path.join(root, 'dist/apps/scheduler/main.js')], {
      env: { ...common, PORT: process.env.SCHEDULER_PORT || '4000', SCHEDULER_API_TOKENS: token },
      stdio: 'inherit',
    }),
    spawn(process.execPath, [path.join(root, 'dist/apps/orders/main.js')], {
      env: { ...common, DQ_MODE: 'service', PORT: process.env.PORT || '3000', REDIS_URL: redis.url },
      stdio: 'inherit',
    }),
  ];
  if (!process.env.SCHEDULER_API_TOKENS) logger.log(`Scheduler API token: ${token}`);
  let stopping = false;
  const exits = children.map((child) => new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))));
  const stop = async (code) => {
    if (stopping) return;
    stopping = true;
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.all(exits);
    await redis.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  // NOTE: when either process ends by itself, the other is stopped too.
  for (const exit of exits) {
    void exit.then(({ code, signal }) => {
      if (!stopping) logger.error(`A process of the sample ended (${signal ?? `code ${code}`}); stopping the other`);
      void stop(1);
    });
  }
}

main().catch((error) => {
  console.error(error && error.message ? error.message : error);
  process.exit(1);
});
