import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'http';
import type { ServerResponse } from 'http';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, SCHEDULER_RPC } from '../distributed-queue.constants';
import { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { InvalidOptionsError } from '../errors';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import type { ResolvedServiceClientOptions } from '../options/resolve-service';
import type { RedisClient } from '../redis/script-loader';
import { DeliveryRunner } from './delivery-runner';
import { DEFAULT_TOLERANCE_MS, RESULTS_CONTENT_TYPE, type DeliveryBody } from './delivery-signature';
import { TaskEventBus } from '../events/task-event-bus';
import { LineWriter, resultLine } from './result-lines';
import { memoryReplayGuard, redisReplayGuard } from './replay-guard';
import type { SchedulerRpcClient } from './scheduler-rpc-client';
import { BodyTooLargeError, readRawBody, type IncomingRequest } from './request-body';
import { ServiceRegistry, type ServiceTypeOptions } from './service-registry';
import { toServiceTypeOptions } from './service-type-options';
import { shutdownCall } from '../runtime/graceful-stop';
import { StartupSteps } from '../runtime/startup-steps';
import { reportFailure } from '../redis/outage-log';
import { closeAfterAnswer } from './closing-answer';

/** The registry as reached through the scheduler (`service.url`). */
function schedulerRegistry(rpc: SchedulerRpcClient): Pick<ServiceRegistry, 'register' | 'leave'> {
  return {
    register: (app, instance, types, ttlMs) => rpc.call({ op: 'register', app, instance, types, ttlMs }),
    leave: (app, instanceId) => rpc.call({ op: 'leave', app, instanceId }),
  };
}

/**
 * Client mode (`mode: 'service'`): registers this application's `@TaskWorker` types at start-up (a type
 * owned by another application fails the start with `TypeOwnedError`), registers this instance once its
 * HTTP server listens and renews it every `heartbeatMs`, and answers the scheduler's deliveries at the
 * callback path. On shutdown it leaves the registry first, then waits for the deliveries it is running.
 */
@Injectable()
export class ServiceClient implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('DistributedQueue');
  private registry?: Pick<ServiceRegistry, 'register' | 'leave'>;
  private runner?: DeliveryRunner;
  private heartbeat?: NodeJS.Timeout;
  /** The types this application registers, with the options the scheduler runs them with. */
  private types: Record<string, ServiceTypeOptions> = {};
  private joined = false;
  /** When this instance's registration last reached Redis (epoch ms; 0: not yet). */
  lastRenewAt = 0;
  private stopping = false;
  /** The delivery requests being answered. */
  private readonly answering = new Set<ServerResponse>();
  private idle: (() => void)[] = [];

  constructor(
    private readonly explorer: DistributedQueueExplorer,
    @Inject(DISTRIBUTED_QUEUE_REDIS) private readonly redis: RedisClient,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(SCHEDULER_RPC) private readonly rpc: SchedulerRpcClient | null,
    private readonly events: TaskEventBus,
    private readonly startup: StartupSteps,
    @Optional() private readonly adapterHost?: HttpAdapterHost,
  ) {}

  private get service(): ResolvedServiceClientOptions | null {
    return this.options.service;
  }

  /** The URL the scheduler calls for this instance. */
  get callbackUrl(): string {
    return `${this.service?.publicUrl}${this.service?.callbackPath}`;
  }

  onApplicationBootstrap(): Promise<void> {
    const service = this.service;
    if (!service) return Promise.resolve();
    const server = this.adapterHost?.httpAdapter?.getHttpServer?.() as Server | undefined;
    if (!server) return Promise.reject(new InvalidOptionsError('mode', "'service' needs an HTTP application (NestFactory.create): the scheduler calls it back"));
    const workers = new Map(this.explorer.getWorkers().map((w) => [w.type, w]));
    this.registry = this.rpc ? schedulerRegistry(this.rpc) : new ServiceRegistry(this.redis, this.options.keyPrefix);
    this.runner = new DeliveryRunner(
      service.secret,
      (type) => {
        const worker = workers.get(type);
        return worker && { handler: worker.handler, timeoutMs: worker.options.timeoutMs };
      },
      // NOTE: without Redis (service.url) each instance remembers the deliveries it was sent itself.
      this.rpc ? memoryReplayGuard() : redisReplayGuard(this.redis, this.options.keyPrefix, service.appName),
      DEFAULT_TOLERANCE_MS,
      (run) => this.events.handlerRan(run),
    );
    this.types = Object.fromEntries([...workers].map(([type, w]) => [type, toServiceTypeOptions(w.options, service.maxRequestBytes)]));
    return this.startup.run('service mode', () => this.register(service, server));
  }

  /** Registers the application's types; its instance joins once the HTTP server listens. */
  private async register(service: ResolvedServiceClientOptions, server: Server): Promise<void> {
    await this.registry?.register(service.appName, null, this.types, service.instanceTtlMs);
    // NOTE: the instance is registered only once it can answer: a delivery before that would fail.
    if (server.listening) void this.join();
    else server.once('listening', () => void this.join());
  }


  private async join(): Promise<void> {
    if (this.stopping || !this.service) return;
    await this.renew();
    this.heartbeat = setInterval(() => void this.renew(), this.service.heartbeatMs);
    this.logger.log(`Service mode: instance ${this.service.instanceId} of "${this.service.appName}" answers at ${this.callbackUrl}`);
  }

  private async renew(): Promise<void> {
    const service = this.service;
    if (!service || !this.registry || this.stopping) return;
    try {
      await this.registry.register(service.appName, { id: service.instanceId, url: this.callbackUrl }, this.types, service.instanceTtlMs);
      this.joined = true;
      this.lastRenewAt = Date.now();
    } catch (error) {
      reportFailure(this.logger, 'Service mode: renewing the instance', error, `Service mode: could not renew instance ${service.instanceId}: ${(error as Error).message}`);
    }
  }

  /** Answers one delivery request (the callback path's POST handler): NDJSON results as tasks end. */
  async handle(req: IncomingRequest, res: ServerResponse): Promise<void> {
    this.answering.add(res);
    if (this.stopping) closeAfterAnswer(res);
    try {
      await this.answer(req, res);
    } catch (error) {
      // NOTE: e.g. Redis unreachable for the replay check (nothing ran): the scheduler hands the tasks back
      // without counting an attempt, and delivers to this instance again after its next heartbeat.
      this.logger.warn(`Service mode: could not answer a delivery: ${(error as Error).message}`);
      if (!res.headersSent) {
        res.statusCode = 503;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ ok: false, error: { name: 'Unavailable', message: (error as Error).message } }));
      } else if (!res.writableEnded) res.end();
    } finally {
      this.answering.delete(res);
      if (this.answering.size === 0) this.idle.splice(0).forEach((resolve) => resolve());
    }
  }

  private async answer(req: IncomingRequest, res: ServerResponse): Promise<void> {
    const accepted = await this.accept(req);
    if (!Array.isArray(accepted)) {
      res.statusCode = accepted.status;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(accepted.body));
      return;
    }
    res.writeHead(200, { 'content-type': RESULTS_CONTENT_TYPE });
    const lines = new LineWriter(res);
    await this.runner!.runAll(accepted, (result) => lines.push(resultLine(result)));
    lines.end();
  }

  private async accept(req: IncomingRequest): Promise<DeliveryBody[] | { status: number; body: unknown }> {
    // NOTE: a stopping instance still answers: it has left the registry, and what was sent before it left runs.
    if (!this.runner) return { status: 503, body: { ok: false, error: { name: 'Unavailable', message: 'this instance is starting' } } };
    let raw: string;
    try {
      raw = await readRawBody(req, this.service!.maxRequestBytes);
    } catch (error) {
      const [status, name] = error instanceof BodyTooLargeError ? [413, 'PayloadTooLargeError'] : [400, 'BadRequest'];
      return { status, body: { ok: false, error: { name, message: (error as Error).message } } };
    }
    return this.runner.accept(req.headers, raw);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.startup.halt();
    if (!this.service) return;
    this.stopping = true;
    clearInterval(this.heartbeat);
    for (const res of this.answering) closeAfterAnswer(res);
    if (this.joined && this.registry) {
      await shutdownCall(this.registry.leave(this.service.appName, this.service.instanceId), 'leaving the registry').catch((error: Error) => {
        this.logger.warn(`Service mode: could not leave the registry: ${error.message}`);
      });
    }
    if (this.answering.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.shutdownTimeoutMs);
        this.idle.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    // NOTE: the HTTP server closes only once every request is answered: the grace is over, answer them.
    if (this.runner?.abortAll()) this.logger.log('Service mode: deliveries still running at the end of the grace handed back to the scheduler');
  }
}
