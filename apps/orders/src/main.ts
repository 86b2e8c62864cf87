import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'net';
import { AppModule } from './app.module';
import { intFromEnv, StartupError } from './env';
import { MAX_CLOSE_AFTER_MS } from './orders/create-order.input';
import { resolveRedis } from './redis-bootstrap';

const logger = new Logger('OrdersApp');

function printUsage(base: string, closeAfterMs: number): void {
  logger.log(`Orders sample listening on ${base} (unpaid orders close after ${closeAfterMs} ms)`);
  console.log(
    [
      '',
      'Try it:',
      `  curl -s -X POST ${base}/orders -H 'content-type: application/json' -d '{"item":"book","amount":12.5}'`,
      `  curl -s -X POST ${base}/orders -H 'content-type: application/json' -d '{"item":"pen","amount":2,"closeAfterMs":5000}'`,
      `  curl -s -X POST ${base}/orders/<id>/pay`,
      `  curl -s ${base}/orders/<id>`,
      'Stop with Ctrl-C.',
      '',
    ].join('\n'),
  );
}

async function bootstrap(): Promise<void> {
  const port = intFromEnv('PORT', 3000, 0, 65535);
  const closeAfterMs = intFromEnv('ORDER_CLOSE_AFTER_MS', 30_000, 0, MAX_CLOSE_AFTER_MS);
  const redis = await resolveRedis(logger);
  try {
    // abortOnError: false makes start-up errors reject (instead of process.abort()), so the local Redis is stopped.
    const app = await NestFactory.create(AppModule.register({ redisUrl: redis.url, closeAfterMs, onShutdown: redis.stop }), {
      abortOnError: false,
    });
    app.enableShutdownHooks(); // SIGINT/SIGTERM: workers finish, connections close, then onShutdown stops a local Redis
    try {
      await app.listen(port);
    } catch (error) {
      await app.close();
      throw error;
    }
    const { port: actual } = app.getHttpServer().address() as AddressInfo;
    printUsage(`http://localhost:${actual}`, closeAfterMs);
  } catch (error) {
    await redis.stop();
    throw error;
  }
}

bootstrap().catch((error: unknown) => {
  if (error instanceof StartupError) console.error(error.message);
  else logger.error(`Start-up failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
