import { Controller, Get, Header } from '@nestjs/common';
import { register } from 'prom-client';

/**
 * `GET /metrics`: prom-client's global registry in the Prometheus text format, where the queue module
 * (`metrics: true`) registers its `dq_*` metrics.
 */
@Controller('metrics')
export class MetricsController {
  @Get()
  @Header('Content-Type', register.contentType)
  scrape(): Promise<string> {
    return register.metrics();
  }
}
