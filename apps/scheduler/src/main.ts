import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'net';
import { SchedulerModule } from './scheduler.module';
import { schedulerConfigFromEnv, StartupError } from './scheduler.config';

const logger = new Logger('Scheduler');

/** Starts the scheduler of service mode (settings: see `schedulerConfigFromEnv`). */
async function bootstrap(): Promise<void> {
  const config = schedulerConfigFromEnv();
  // NOTE: the JSON body limit is SCHEDULER_MAX_REQUEST_BYTES (Express's default 100 kB would refuse a 1 MB payload).
  // NOTE: forceCloseConnections: a graceful stop closes the HTTP server after the queue's own shutdown; without
  // it the server waits for every kept-alive connection to go idle, which the instances' RPC polls never let
  // happen (SIGTERM hung for good). Their calls cut then fail and are retried against the next scheduler.
  const app = await NestFactory.create<NestExpressApplication>(SchedulerModule.register(config), { abortOnError: false, bodyParser: false, forceCloseConnections: true });
  app.useBodyParser('json', { limit: config.maxRequestBytes });
  app.enableShutdownHooks();
  await app.listen(config.port);
  const { port } = app.getHttpServer().address() as AddressInfo;
  const base = `http://localhost:${port}`;
  logger.log(`Scheduler listening on ${base} (key prefix "${config.keyPrefix}")`);
  if (!process.env.SCHEDULER_API_TOKENS) logger.log(`API token (set SCHEDULER_API_TOKENS to choose): ${config.apiTokens[0]}`);
  console.log(`  curl -s ${base}/api/apps -H 'authorization: Bearer <token>'`);
  process.send?.({ type: 'ready', pid: process.pid, port });
}

bootstrap().catch((error: unknown) => {
  if (error instanceof StartupError) console.error(error.message);
  else logger.error(`Start-up failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
