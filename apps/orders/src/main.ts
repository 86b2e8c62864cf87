import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'net';
import { hostname } from 'os';
import { AppModule } from './app.module';
import { APP_CONFIG, AppConfig } from './app.config';
import { intFromEnv, StartupError } from './env';
import { MAX_CLOSE_AFTER_MS } from './orders/create-order.input';
import { resolveRedis } from './redis-bootstrap';

const logger = new Logger('OrdersApp');

function printUsage(base: string, closeAfterMs: number, machineId: string | null, dashboardToken: string): void {
  const mode = machineId ? `route queue machine ${machineId}` : 'service mode: the scheduler closes orders; no ledger';
  logger.log(`Orders sample listening on ${base} (unpaid orders close after ${closeAfterMs} ms; ${mode})`);
  const ledger = [
    `  curl -s -X POST ${base}/accounts/alice/events -H 'content-type: application/json' -d '{"type":"deposit","amount":100}'`,
    `  curl -s -X POST ${base}/accounts/alice/events -H 'content-type: application/json' -d '{"type":"withdraw","amount":30}'`,
    `  curl -s ${base}/accounts/alice`,
    `  curl -s ${base}/route/status`,
  ];
  console.log(
    [
      '',
      'Try it:',
      `  curl -s -X POST ${base}/orders -H 'content-type: application/json' -d '{"item":"book","amount":12.5}'`,
      `  curl -s -X POST ${base}/orders -H 'content-type: application/json' -d '{"item":"pen","amount":2,"closeAfterMs":5000}'`,
      `  curl -s -X POST ${base}/orders/<id>/pay`,
      `  curl -s ${base}/orders/<id>`,
      ...(machineId ? ledger : []),
      `  curl -s ${base}/health`,
      `  curl -s ${base}/metrics`,
      `  open ${base}/queues/login?token=${dashboardToken}   (the queues dashboard; set DASHBOARD_TOKEN to choose the token)`,
      'Stop with Ctrl-C.',
      '',
    ].join('\n'),
  );
}

/**
 * Service mode when DQ_MODE=service: DQ_SERVICE_SECRET (shared with the scheduler, 16+ characters) and
 * PUBLIC_URL (where the scheduler reaches this app; default http://127.0.0.1:<PORT>) are read.
 */
function serviceFromEnv(port: number): { secret: string; publicUrl: string } | undefined {
  const mode = process.env.DQ_MODE?.trim() || 'plugin';
  if (mode === 'plugin') return undefined;
  if (mode !== 'service') throw new StartupError(`DQ_MODE must be "plugin" or "service", got "${mode}"`);
  const secret = process.env.DQ_SERVICE_SECRET?.trim() ?? '';
  if (secret.length < 16) throw new StartupError('DQ_SERVICE_SECRET is required with DQ_MODE=service: the secret shared with the scheduler, 16+ characters');
  if (port === 0 && !process.env.PUBLIC_URL) throw new StartupError('DQ_MODE=service needs a fixed PORT (or PUBLIC_URL): the scheduler calls this app back');
  return { secret, publicUrl: process.env.PUBLIC_URL?.trim() || `http://127.0.0.1:${port}` };
}

async function bootstrap(): Promise<void> {
  const port = intFromEnv('PORT', 3000, 0, 65535);
  const closeAfterMs = intFromEnv('ORDER_CLOSE_AFTER_MS', 30_000, 0, MAX_CLOSE_AFTER_MS);
  // One machine id per copy sharing a Redis; tied to the port (not the pid) so a restarted copy resumes its partitions.
  const machineId = process.env.MACHINE_ID?.trim() || (port === 0 ? undefined : `${hostname()}:${port}`);
  const service = serviceFromEnv(port);
  const redis = await resolveRedis(logger);
  try {
    // abortOnError: false makes start-up errors reject (instead of process.abort()), so the local Redis is stopped.
    // forceCloseConnections: on SIGTERM the HTTP server closes once the queue stopped, not when every kept-alive
    // connection goes idle (a dashboard tab polling it, or the scheduler delivering, would hold the exit for good).
    const app = await NestFactory.create(AppModule.register({ redisUrl: redis.url, closeAfterMs, route: { machineId }, service, onShutdown: redis.stop }), {
      abortOnError: false,
      forceCloseConnections: true,
    });
    app.enableShutdownHooks(); // SIGINT/SIGTERM: workers finish, connections close, then onShutdown stops a local Redis
    try {
      await app.listen(port);
    } catch (error) {
      await app.close();
      throw error;
    }
    const { port: actual } = app.getHttpServer().address() as AddressInfo;
    const config = app.get<typeof APP_CONFIG, AppConfig>(APP_CONFIG);
    printUsage(`http://localhost:${actual}`, closeAfterMs, service ? null : config.route.machineId, config.dashboardToken);
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
