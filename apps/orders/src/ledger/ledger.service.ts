import { Inject, Injectable, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import { randomUUID } from 'crypto';
import { OrderedDeadTask, OrderedSubmitResult, RouteStatus, TaskInspectorService, TaskSubmitService } from 'nestjs-distributed-queue';
import { APP_CONFIG, AppConfig } from '../app.config';
import { Account, LEDGER_APPLY_TASK, LedgerApplyPayload } from './ledger';
import { LedgerEventInput } from './ledger-event.input';
import { LedgerStore } from './ledger.store';

export interface SubmittedEvent {
  eventId: string;
  partition: number;
  outcome: OrderedSubmitResult['outcome'];
}

/** The route status as seen from this instance: which machine it is and which partitions it owns. */
export type RouteStatusView = { machineId: string; owned: number[] } & RouteStatus;

@Injectable()
export class LedgerService {
  constructor(
    private readonly store: LedgerStore,
    private readonly tasks: TaskSubmitService,
    private readonly inspector: TaskInspectorService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Queues the event on the account's ordering key; the event id is the task id. 503 when the partition is full. */
  async submit(accountId: string, { type, amount, eventId = randomUUID() }: LedgerEventInput): Promise<SubmittedEvent> {
    const { partition, outcome } = await this.tasks.submitOrdered<LedgerApplyPayload>(
      LEDGER_APPLY_TASK, accountId, { eventId, type, amount }, { id: eventId },
    );
    if (outcome === 'discarded') {
      throw new ServiceUnavailableException({
        message: `Partition ${partition} is full: event ${eventId} was not queued, try again later`,
        eventId, partition, outcome,
      });
    }
    return { eventId, partition, outcome };
  }

  async get(accountId: string): Promise<Account> {
    const account = await this.store.get(accountId);
    if (!account) throw new NotFoundException(`Account ${accountId} has no processed event yet`);
    return account;
  }

  async routeStatus(): Promise<RouteStatusView> {
    const { machineId } = this.config.route;
    const status = await this.inspector.getRouteStatus();
    const owned = status.partitions.filter((p) => p.owner === machineId).map((p) => p.partition);
    return { machineId, owned, ...status };
  }

  deadLetters(limit: number): Promise<OrderedDeadTask[]> {
    return this.inspector.listOrderedDead(limit);
  }
}
