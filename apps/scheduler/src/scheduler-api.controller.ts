import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, UseFilters, UseGuards } from '@nestjs/common';
import {
  InvalidArgumentError, PayloadTooLargeError, ServiceScheduler, TaskInspectorService, TaskSubmitService, UnknownTaskTypeError, type SubmitOptions,
} from 'nestjs-distributed-queue';
import { ApiErrorFilter } from './api-error.filter';
import { ApiTokenGuard } from './api-token.guard';

/** The body of `POST /api/tasks`. */
interface SubmitBody extends SubmitOptions {
  type: string;
  payload?: unknown;
}

/** A whole number of the query string (digits only), or `fallback` when the parameter is absent. */
function queryInt(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) throw new InvalidArgumentError(name, `must be a whole number, got ${JSON.stringify(value).slice(0, 40)}`);
  return Number(value);
}

function objectBody<T>(body: unknown): T {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new InvalidArgumentError('body', 'expected a JSON object');
  return body as T;
}

/**
 * The scheduler's HTTP API (every route needs `Authorization: Bearer <token>`): submit, cancel,
 * reschedule and read the state of the tasks of registered types; list and re-drive dead letters; list the
 * registry.
 */
@Controller('api')
@UseGuards(ApiTokenGuard)
@UseFilters(ApiErrorFilter)
export class SchedulerApiController {
  constructor(
    @Inject(TaskSubmitService) private readonly submitter: TaskSubmitService,
    @Inject(TaskInspectorService) private readonly inspector: TaskInspectorService,
    @Inject(ServiceScheduler) private readonly scheduler: ServiceScheduler,
  ) {}

  /** Registered applications, their live instances and types. */
  @Get('apps')
  apps() {
    return this.scheduler.describe();
  }

  /**
   * Submits a task of a registered type: `{ type, payload, id?, delay?, runAt? }` → `{ id }`. A payload too
   * big for one delivery request of the owning application (its `service.maxRequestBytes`) is refused here
   * (400 `PayloadTooLargeError`), not dead-lettered later.
   */
  @Post('tasks')
  @HttpCode(201)
  async submit(@Body() raw: unknown): Promise<{ id: string }> {
    const { type, payload, id, delay, runAt } = objectBody<SubmitBody>(raw);
    await this.registered(type);
    const limit = await this.scheduler.payloadLimitOf(type);
    const bytes = Buffer.byteLength(JSON.stringify(payload ?? null) ?? '');
    if (limit !== null && bytes > limit) {
      const error = new PayloadTooLargeError(bytes, limit);
      error.message = `${bytes} bytes is larger than the owning application takes in a delivery (${limit}: its service.maxRequestBytes less 64 KiB)`;
      throw error;
    }
    return { id: await this.submitter.submit(type, payload ?? null, { id, delay, runAt }) };
  }

  /** A task's state: delayed, ready, running, done, dead or unknown. */
  @Get('tasks/:type/:id')
  async state(@Param('type') type: string, @Param('id') id: string) {
    await this.registered(type);
    return { type, id, state: await this.inspector.getState(type, id) };
  }

  /** Cancels a task: `{ result: 'cancelled' | 'cancelling' | ... }`. */
  @Delete('tasks/:type/:id')
  async cancel(@Param('type') type: string, @Param('id') id: string) {
    await this.registered(type);
    return { result: await this.submitter.cancel(type, id) };
  }

  /** Moves a waiting task: `{ delay }` or `{ runAt }` → `{ rescheduled }`. */
  @Post('tasks/:type/:id/reschedule')
  @HttpCode(200)
  async reschedule(@Param('type') type: string, @Param('id') id: string, @Body() raw: unknown) {
    const { delay, runAt } = objectBody<SubmitOptions>(raw);
    await this.registered(type);
    return { rescheduled: await this.submitter.reschedule(type, id, { delay, runAt }) };
  }

  /** The dead letters of a type, oldest first: `?offset=` (default 0) and `?limit=` (1 to 1000, default 100). */
  @Get('dead/:type')
  async dead(@Param('type') type: string, @Query('offset') offset: unknown, @Query('limit') limit: unknown) {
    const page = [queryInt(offset, 'offset', 0), queryInt(limit, 'limit', 100)] as const;
    await this.registered(type);
    return this.inspector.listDead(type, ...page);
  }

  /** Re-drives dead letters of a type: `{ ids? }` (none: up to 100) → `{ redriven }`. */
  @Post('dead/:type/redrive')
  @HttpCode(200)
  async redrive(@Param('type') type: string, @Body() raw: unknown) {
    const { ids } = objectBody<{ ids?: string[] }>(raw ?? {});
    await this.registered(type);
    return { redriven: await this.inspector.redriveDead(type, ids ?? []) };
  }

  private async registered(type: unknown): Promise<void> {
    if (typeof type !== 'string' || type.length === 0) throw new InvalidArgumentError('type', 'expected a task type name');
    if ((await this.scheduler.ownerOf(type)) === null) throw new UnknownTaskTypeError(type);
  }
}
