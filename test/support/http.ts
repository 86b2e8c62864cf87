import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import type { AddressInfo } from 'net';
import type { AppOptions } from '../../apps/orders/src/app.config';
import { AppModule } from '../../apps/orders/src/app.module';

/** A JSON reply of the sample app. */
export interface Reply {
  status: number;
  body: any;
}

/** Calls the sample app over HTTP with a JSON body; bounded by a 5 s timeout. */
export async function httpCall(base: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Reply> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** The sample application listening on a free port, with a Redis client on the same server. */
export interface SampleApp {
  app: INestApplication;
  base: string;
  redis: Redis;
  close(): Promise<void>;
}

/** Starts the sample application (`AppModule.register(options)`) on a free port. */
export async function startSampleApp(options: AppOptions): Promise<SampleApp> {
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.register(options)] }).compile();
  const app = moduleRef.createNestApplication({ logger: ['error', 'warn'] });
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 3 });
  return {
    app, base, redis,
    close: async () => {
      redis.disconnect();
      await app.close();
    },
  };
}
