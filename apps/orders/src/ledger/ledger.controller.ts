import { BadRequestException, Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import type { OrderedDeadTask } from 'nestjs-distributed-queue';
import { Account } from './ledger';
import { parseAccountId, parseLedgerEvent } from './ledger-event.input';
import { LedgerService, RouteStatusView, SubmittedEvent } from './ledger.service';

@Controller()
export class LedgerController {
  constructor(private readonly ledger: LedgerService) {}

  /** 202 with `{ eventId, partition, outcome }`: applied asynchronously, in order per account; 400 on bad input. */
  @Post('accounts/:id/events')
  @HttpCode(202)
  submit(@Param('id') id: string, @Body() body: unknown): Promise<SubmittedEvent> {
    return this.ledger.submit(parseAccountId(id), parseLedgerEvent(body));
  }

  /** 200 with `{ id, balance, applied, rejected, lastEvents }`; 404 when no event was processed for it yet. */
  @Get('accounts/:id')
  get(@Param('id') id: string): Promise<Account> {
    return this.ledger.get(parseAccountId(id));
  }

  /** The route queue: partitions (owner, epoch, state, waiting, inFlight, dead), machines, and this instance's machineId. */
  @Get('route/status')
  status(): Promise<RouteStatusView> {
    return this.ledger.routeStatus();
  }

  /** Route queue dead letters (ledger events that failed maxAttempts times), at most `limit` per partition. */
  @Get('route/dead')
  dead(@Query('limit') limit?: string): Promise<OrderedDeadTask[]> {
    const n = limit === undefined ? 100 : Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > 1000) throw new BadRequestException('limit must be an integer from 1 to 1000');
    return this.ledger.deadLetters(n);
  }
}
