import { createHash, randomBytes } from 'crypto';
import type { ModuleRef } from '@nestjs/core';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import type { RedisClient } from '../redis/script-loader';

/** The form of a session id: 32 random bytes, base64url. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/**
 * The dashboard's browser sessions, kept in Redis so that every instance of the application behind a load
 * balancer sees the same ones: a sign-in makes a random id (the cookie's value; a new one each time) and
 * stores `<prefix>:{<prefix>:__dashboard__}:session:<sha256 of the id>` (within the ACL rule's `~<prefix>:{<prefix>:*`) with the session's lifetime as its TTL (one SET
 * ... PX: the session exists exactly while the key does). A request's cookie is valid while its key exists;
 * signing out deletes the key, ending the session on every instance. Redis holds only hashes of ids: reading
 * the keys gives no cookie to sign in with.
 */
export class DashboardSessions {
  private redis?: { client: RedisClient; prefix: string };

  /**
   * @param moduleRef where the queue module's Redis client and key prefix are found (looked up at first use:
   * the queue module is global and made before any request)
   * @param ttlMs how long a session lasts from its sign-in (ms)
   */
  constructor(
    private readonly moduleRef: ModuleRef,
    readonly ttlMs: number,
  ) {}

  private get client(): RedisClient {
    return this.queueRedis().client;
  }

  private queueRedis(): { client: RedisClient; prefix: string } {
    this.redis ??= {
      client: this.moduleRef.get<RedisClient>(DISTRIBUTED_QUEUE_REDIS, { strict: false }),
      prefix: this.moduleRef.get<ResolvedModuleOptions>(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS, { strict: false }).keyPrefix,
    };
    return this.redis;
  }

  private key(id: string): string {
    const { prefix } = this.queueRedis();
    return `${prefix}:{${prefix}:__dashboard__}:session:${createHash('sha256').update(id).digest('hex')}`;
  }

  /** Starts a session; returns its id (the cookie value). */
  async create(): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    await this.client.set(this.key(id), String(Date.now()), 'PX', this.ttlMs);
    return id;
  }

  /** Whether `id` names a session that has not expired nor been ended. */
  async isValid(id: string | undefined): Promise<boolean> {
    if (id === undefined || !SESSION_ID.test(id)) return false;
    return (await this.client.exists(this.key(id))) === 1;
  }

  /** Ends a session (on every instance); nothing for an unknown id. */
  async end(id: string | undefined): Promise<void> {
    if (id !== undefined && SESSION_ID.test(id)) await this.client.del(this.key(id));
  }
}
