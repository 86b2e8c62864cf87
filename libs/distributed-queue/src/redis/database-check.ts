import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { checkDatabase } from './connection-checks';
import type { RedisClient } from './script-loader';

/** At start-up, fails with `InvalidOptionsError` when the server refuses the connection's database index. */
@Injectable()
export class DatabaseCheck implements OnModuleInit {
  constructor(
    @Inject(DISTRIBUTED_QUEUE_REDIS) private readonly redis: RedisClient,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
  ) {}

  onModuleInit(): Promise<void> {
    // NOTE: with waitForRedis start-up does not wait: a refused database keeps the queues from starting,
    // and the health indicator shows the server's answer (StartupSteps).
    if (this.options.waitForRedis) return Promise.resolve();
    return checkDatabase(this.redis, this.options.connection);
  }
}
