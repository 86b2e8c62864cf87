import { Inject, Injectable, Logger } from '@nestjs/common';
import { Task, TaskHandler, TaskWorker } from 'nestjs-distributed-queue';
import { APP_CONFIG, AppConfig } from '../app.config';
import { LEDGER_APPLY_TASK, LedgerApplyPayload, toCents } from './ledger';
import { LedgerStore } from './ledger.store';

/**
 * Applies account events. Ordered: the route queue runs the events of one account (the task key) one after
 * another in submission order, different accounts in parallel, each partition on one live app instance.
 * Delivery is at-least-once (a partition that changes owner replays its in-flight batch): the store skips
 * event ids it has already applied, so a replay never changes a balance twice.
 */
@TaskWorker(LEDGER_APPLY_TASK, { ordered: true, maxAttempts: 3 })
@Injectable()
export class LedgerApplyWorker implements TaskHandler<LedgerApplyPayload> {
  private readonly logger = new Logger(LedgerApplyWorker.name);

  constructor(
    private readonly store: LedgerStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async handle(task: Task<LedgerApplyPayload>, signal: AbortSignal): Promise<void> {
    const accountId = task.key;
    const { eventId, type, amount } = task.payload ?? ({} as Partial<LedgerApplyPayload>);
    const cents = typeof amount === 'number' ? toCents(amount) : NaN;
    if (!accountId || typeof eventId !== 'string' || !eventId || (type !== 'deposit' && type !== 'withdraw') || !(cents >= 1)) {
      // Retrying cannot fix it: after maxAttempts it goes to the route queue's dead letters (GET /route/dead).
      throw new Error(`Task ${task.id}: not a ledger event (key ${JSON.stringify(accountId)}, payload ${JSON.stringify(task.payload)})`);
    }
    signal.throwIfAborted();
    const { result, seq } = await this.store.apply(accountId, eventId, type, cents, {
      machine: this.config.route.machineId,
      epoch: task.fence?.epoch,
    });
    if (result === 'duplicate') {
      this.logger.log(`Account ${accountId}: event ${eventId} was already processed (#${seq}), skipped (attempt ${task.attempt})`);
    }
    // 'applied' and 'rejected' (a withdraw above the balance) are both recorded in the account's event log.
  }
}
