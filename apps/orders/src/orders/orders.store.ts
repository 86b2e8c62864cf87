import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'crypto';
import { Redis } from 'ioredis';
import { APP_CONFIG, AppConfig } from '../app.config';
import { Order, toOrder } from './order';

/**
 * Moves an order out of 'pending', atomically: paying and closing both go through here, so an order is
 * never both. KEYS[1] the order hash; ARGV new status, time field, time.
 * Returns false for an unknown order, else { status before, the hash after as HGETALL }.
 */
const LEAVE_PENDING_LUA = `
local before = redis.call('HGET', KEYS[1], 'status')
if not before then return false end
if before == 'pending' then
  redis.call('HSET', KEYS[1], 'status', ARGV[1], ARGV[2], ARGV[3])
end
return { before, redis.call('HGETALL', KEYS[1]) }
`;

type OrdersRedis = Redis & {
  leavePending(key: string, status: string, field: string, at: string): Promise<[string, string[]] | null>;
};

export type LeavePendingResult =
  | { outcome: 'moved'; order: Order }
  | { outcome: 'not-pending'; order: Order }
  | { outcome: 'not-found' };

function pairsToHash(pairs: string[]): Record<string, string> {
  const hash: Record<string, string> = {};
  for (let i = 0; i < pairs.length; i += 2) hash[pairs[i]] = pairs[i + 1];
  return hash;
}

/** Orders as Redis hashes `<keyPrefix>:order:<id>`, on a connection of their own. */
@Injectable()
export class OrdersStore implements OnApplicationShutdown {
  private readonly logger = new Logger(OrdersStore.name);
  private readonly redis: OrdersRedis;
  private lastError = '';

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const redis = new Redis(config.redisUrl, { connectionName: 'orders', maxRetriesPerRequest: 3 });
    redis.defineCommand('leavePending', { numberOfKeys: 1, lua: LEAVE_PENDING_LUA });
    redis.on('error', (error: Error) => {
      if (error.message !== this.lastError) this.logger.warn(`Redis: ${error.message}`);
      this.lastError = error.message;
    });
    redis.on('ready', () => (this.lastError = ''));
    this.redis = redis as OrdersRedis;
  }

  key(id: string): string {
    return `${this.config.keyPrefix}:order:${id}`;
  }

  async create(item: string, amount: number): Promise<Order> {
    const order: Order = { id: randomUUID(), item, amount, status: 'pending', createdAt: new Date().toISOString() };
    await this.redis.hset(this.key(order.id), { ...order, amount: String(amount) });
    return order;
  }

  async get(id: string): Promise<Order | null> {
    const hash = await this.redis.hgetall(this.key(id));
    return hash.status ? toOrder(hash) : null;
  }

  async delete(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }

  /** pending -> paid or pending -> closed, stamping paidAt/closedAt; nothing else ever changes the status. */
  async leavePending(id: string, status: 'paid' | 'closed'): Promise<LeavePendingResult> {
    const field = status === 'paid' ? 'paidAt' : 'closedAt';
    const reply = await this.redis.leavePending(this.key(id), status, field, new Date().toISOString());
    if (!reply) return { outcome: 'not-found' };
    const [before, pairs] = reply;
    return { outcome: before === 'pending' ? 'moved' : 'not-pending', order: toOrder(pairsToHash(pairs)) };
  }

  async onApplicationShutdown(): Promise<void> {
    try {
      await Promise.race([this.redis.quit(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    } catch {
      // already disconnected
    }
    this.redis.disconnect();
  }
}
