import type { DistributedQueueHealthDetail, DistributedQueueHealthIndicator, DistributedQueueHealthResult, HealthCheckOptions } from '../health/distributed-queue.health';
import { isInternalType } from '../distributed-queue.constants';
import type { TestQueue } from './test-queue';

/**
 * `DistributedQueueHealthIndicator` of the testing module, so that an application's health endpoint can be
 * unit-tested with it: up, with Redis "not used" and one consumer per worker type (the in-memory engine has
 * no connection to lose and no consumer to stall).
 */
export class MemoryHealthIndicator implements Pick<DistributedQueueHealthIndicator, 'isHealthy'> {
  constructor(private readonly queue: TestQueue) {}

  async isHealthy<K extends string = 'distributed-queue'>(key: K = 'distributed-queue' as K, options: HealthCheckOptions = {}): Promise<DistributedQueueHealthResult<K>> {
    const types = this.queue.workerTypes().filter((type) => options?.includeInternalTypes || !isInternalType(type));
    const consumers = Object.fromEntries(types.map((type) => [type, { status: 'up' as const, message: 'in memory (testing module)' }]));
    const detail: DistributedQueueHealthDetail = { status: 'up', redis: { status: 'up', message: 'not used: the testing module keeps its queues in memory' }, consumers };
    return { [key]: detail } as DistributedQueueHealthResult<K>;
  }
}
