import type { CronStore } from '../cron/cron.store';
import { TaskScheduleService } from '../cron/task-schedule.service';
import type { DistributedQueueExplorer } from '../distributed-queue.explorer';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { noRedis } from '../redis/no-redis';
import { MemoryCronStore } from './memory-cron-store';
import type { MemoryDelayStore } from './memory-delay-store';
import type { MemoryEngine } from './memory-engine';

/**
 * `TaskScheduleService` of the testing module: the real service (its checks, errors, ticks) on the
 * in-memory schedules.
 */
export class MemoryScheduleService extends TaskScheduleService {
  constructor(engine: MemoryEngine, delay: MemoryDelayStore, explorer: DistributedQueueExplorer, options: ResolvedModuleOptions) {
    super(delay, explorer, noRedis(), options);
    (this as { store: CronStore }).store = new MemoryCronStore(engine, delay);
  }
}
