import { DelayQueueStore, type Due, type NewTask } from '../delay/delay-queue.store';
import type { CancelResult } from '../interfaces';
import { noRedis } from '../redis/no-redis';
import type { SchedulerRpcClient } from './scheduler-rpc-client';

/**
 * The delay queue of an application in service mode with `service.url`: submit, cancel, reschedule and a
 * task's state go to the scheduler, which runs the same scripts; everything else needs Redis and rejects
 * with `NoRedisConnectionError`. `TaskSubmitService` validates as always before calling it.
 */
export class RemoteDelayQueueStore extends DelayQueueStore {
  constructor(private readonly rpc: SchedulerRpcClient) {
    super(noRedis(), 'remote');
  }

  override submit(type: string, tasks: NewTask[], requestId: string): Promise<{ id: string; created: boolean }[]> {
    return this.rpc.call({ op: 'submit', type, tasks, requestId });
  }

  override cancel(type: string, id: string): Promise<CancelResult> {
    return this.rpc.call({ op: 'cancel', type, id });
  }

  override reschedule(type: string, id: string, due: Due): Promise<number | null> {
    return this.rpc.call({ op: 'reschedule', type, id, due });
  }

  override get(type: string, id: string): ReturnType<DelayQueueStore['get']> {
    return this.rpc.call({ op: 'get', type, id });
  }
}
