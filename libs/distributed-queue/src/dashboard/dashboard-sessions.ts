import { createHash, createHmac, randomBytes } from 'crypto';
import type { ModuleRef } from '@nestjs/core';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import type { RedisClient } from '../redis/script-loader';

/** The form of a session id: 32 random bytes, base64url. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/**
 * A session's record, written even when Redis is at maxmemory (`allow-oom`): an operator signs in to see what
 * fills it and to free it, and a session is a few bytes with a TTL. KEYS[1] the session, ARGV[1] the token's
 * tag, ARGV[2] its TTL in ms.
 */
const CREATE_SESSION = "#!lua flags=allow-oom\nreturn redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])";

/**
 * The dashboard's browser sessions, kept in Redis so that every instance of the application behind a load
 * balancer sees the same ones: a sign-in makes a random id (the cookie's value; a new one each time) and
 * stores `<prefix>:{<prefix>:__dashboard__}:session:<sha256 of the id>` (within the ACL rule's `~<prefix>:{<prefix>:*`) with the session's lifetime as its TTL (one SET
 * ... PX: the session exists exactly while the key does). A request's cookie is valid while its key exists;
 * signing out deletes the key, ending the session on every instance. Redis holds only hashes of ids: reading
 * the keys gives no cookie to sign in with. The key's value is a tag of the token the session was signed in
 * with (an HMAC of it): a session is valid only under that token, so a new token (a leaked one rotated)
 * ends every session of the old one.
 */
export class DashboardSessions {
  private redis?: { client: RedisClient; prefix: string };
  /** What a session's key holds: a tag of the token it was signed in with. */
  private readonly tokenTag: string;

  /**
   * @param moduleRef where the queue module's Redis client and key prefix are found (looked up at first use:
   * the queue module is global and made before any request)
   * @param ttlMs how long a session lasts from its sign-in (ms)
   * @param token the dashboard's token (sessions are signed in with it)
   */
  constructor(
    private readonly moduleRef: ModuleRef,
    readonly ttlMs: number,
    token: string | undefined,
  ) {
    this.tokenTag = createHmac('sha256', token ?? '').update('nestjs-distributed-queue dashboard session').digest('hex');
  }

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
    await this.client.eval(CREATE_SESSION, 1, this.key(id), this.tokenTag, this.ttlMs);
    return id;
  }

  /** Whether `id` names a session of the current token that has not expired nor been ended. */
  async isValid(id: string | undefined): Promise<boolean> {
    if (id === undefined || !SESSION_ID.test(id)) return false;
    return (await this.client.get(this.key(id))) === this.tokenTag;
  }

  /** Ends a session (on every instance); nothing for an unknown id. */
  async end(id: string | undefined): Promise<void> {
    if (id !== undefined && SESSION_ID.test(id)) await this.client.del(this.key(id));
  }
}
