import { Module } from '@nestjs/common';
import { LedgerApplyWorker } from './ledger-apply.worker';
import { LedgerController } from './ledger.controller';
import { LedgerService } from './ledger.service';
import { LedgerStore } from './ledger.store';

/**
 * Account ledger on the route (ordered) queue. TaskSubmitService and TaskInspectorService come from the global
 * DistributedQueueModule (configured with `route`); LedgerApplyWorker is discovered by it.
 */
@Module({
  controllers: [LedgerController],
  providers: [LedgerStore, LedgerService, LedgerApplyWorker],
})
export class LedgerModule {}
