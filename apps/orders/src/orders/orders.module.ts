import { Module } from '@nestjs/common';
import { CloseOrderWorker } from './close-order.worker';
import { OrdersController } from './orders.controller';
import { OrdersService } from './orders.service';
import { OrdersStore } from './orders.store';

/** TaskSubmitService comes from the global DistributedQueueModule; CloseOrderWorker is discovered by it. */
@Module({
  controllers: [OrdersController],
  providers: [OrdersStore, OrdersService, CloseOrderWorker],
})
export class OrdersModule {}
