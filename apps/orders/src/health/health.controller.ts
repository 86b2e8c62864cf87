import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { DistributedQueueHealthIndicator } from 'nestjs-distributed-queue';

/** `GET /health`: 200 while Redis, the workers and the route queue membership are healthy, else 503 with what failed. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly queue: DistributedQueueHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.queue.isHealthy()]);
  }
}
