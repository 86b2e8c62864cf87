import type { LoggerService } from '@nestjs/common';
import { CRON_TICK_TYPE, cronRunType, routeDelayType } from '../distributed-queue.constants';
import { labelledLogger } from './labelled-logger';

function recording(): { logger: LoggerService; lines: string[] } {
  const lines: string[] = [];
  const logger: LoggerService = {
    log: (m: string) => lines.push(`log ${m}`),
    warn: (m: string) => lines.push(`warn ${m}`),
    error: (m: string) => lines.push(`error ${m}`),
  };
  return { logger, lines };
}

describe('labelledLogger', () => {
  it("is the logger itself for a user's type", () => {
    const { logger } = recording();
    expect(labelledLogger(logger, 'order.close')).toBe(logger);
  });

  it("names the library's own types by what they do, a tick by its schedule, and keeps the levels it has", () => {
    const { logger, lines } = recording();
    labelledLogger(logger, routeDelayType('q')).warn(`[${routeDelayType('q')}] fetch failed, retrying: x`);
    labelledLogger(logger, cronRunType('sweep')).error(`[${cronRunType('sweep')}] task sweep@1000 attempt 3 failed (Error: no): dead`);
    labelledLogger(logger, CRON_TICK_TYPE).warn(`[${CRON_TICK_TYPE}] task sweep@2@1000 attempt 1 failed (SyntaxError: x): retried`);
    labelledLogger(logger, CRON_TICK_TYPE).log('not a consumer line');
    expect(lines).toEqual([
      'warn [delayed ordered tasks of route queue "q"] fetch failed, retrying: x',
      'error [schedule "sweep"] task sweep@1000 attempt 3 failed (Error: no): dead',
      'warn [tick of schedule "sweep"] task sweep@2@1000 attempt 1 failed (SyntaxError: x): retried',
      'log not a consumer line',
    ]);
    expect(labelledLogger(logger, CRON_TICK_TYPE).debug).toBeUndefined();
  });
});
