import { Controller, DynamicModule, Get, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { DistributedQueueModule } from 'nestjs-distributed-queue';
import { ApiErrorFilter } from './api-error.filter';
import { ApiTokenGuard } from './api-token.guard';
import { SCHEDULER_CONFIG, type SchedulerConfig } from './scheduler.config';
import { SchedulerApiController } from './scheduler-api.controller';

/** `GET /health`: the process answers (no token needed). */
@Controller('health')
class HealthController {
  @Get()
  health() {
    return { ok: true };
  }
}

/** The scheduler of service mode: the queue module in mode 'scheduler' and its HTTP API. */
@Module({})
export class SchedulerModule {
  static register(config: SchedulerConfig): DynamicModule {
    return {
      module: SchedulerModule,
      imports: [
        DistributedQueueModule.forRoot({
          mode: 'scheduler',
          connection: config.connection,
          keyPrefix: config.keyPrefix,
          shutdownTimeoutMs: config.shutdownTimeoutMs,
          // The applications' schedules (TaskScheduleService.upsert) tick here; their tasks are delivered as any other.
          schedules: true,
          scheduler: {
            secret: config.secret, syncIntervalMs: config.syncIntervalMs, visibilityTimeoutMs: config.visibilityTimeoutMs, maxRequestBytes: config.maxRequestBytes,
          },
        }),
      ],
      controllers: [SchedulerApiController, HealthController],
      // NOTE: global as well, so that what fails before a controller (the body parser: 413, bad JSON) answers `{ error }` too.
      providers: [{ provide: SCHEDULER_CONFIG, useValue: config }, ApiTokenGuard, { provide: APP_FILTER, useClass: ApiErrorFilter }],
    };
  }
}
