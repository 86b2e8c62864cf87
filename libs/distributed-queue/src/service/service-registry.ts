import { InvalidArgumentError, TypeOwnedError } from '../errors';
import type { RedisClient } from '../redis/script-loader';
import { assertTaskType } from '../options/resolve-options';
import { PLAIN_NAME, PLAIN_NAME_RULE } from '../options/checks';

/** What the scheduler needs to run a type's deliveries (from the application's `@TaskWorker` options). */
export interface ServiceTypeOptions {
  /** Tasks of the type delivered at once (the worker's `concurrency`). */
  concurrency: number;
  /** Attempts before a task goes to dead letters (the worker's `maxAttempts`). */
  maxAttempts: number;
  /** The handler's time budget per attempt, ms (the worker's `timeoutMs`). */
  timeoutMs: number;
  /** The delay between attempts (the worker's `backoff`, as the application registered it). */
  backoff: unknown;
  /** The largest request the application's instances take (`service.maxRequestBytes`); absent from older versions. */
  maxRequestBytes?: number;
}

/** A live instance of an application: where its callback controller answers. */
export interface ServiceInstance {
  /** The instance's id (`service.instanceId`). */
  id: string;
  /** The URL its deliveries are posted to (its callback controller). */
  url: string;
}

/** Key names of service mode's registry (one Cluster slot: the hash tag `{<prefix>:svc}`). */
export function serviceKeys(prefix: string) {
  const base = `${prefix}:{${prefix}:svc}`;
  return {
    /** SET of application names. */
    apps: `${base}:apps`,
    /** HASH type -> application. */
    owners: `${base}:owners`,
    /** HASH type -> ServiceTypeOptions JSON, per application. */
    types: (app: string) => `${base}:app:${app}:types`,
    /** ZSET instance id -> live until (ms, Redis clock), per application. */
    instances: (app: string) => `${base}:app:${app}:instances`,
    /** HASH instance id -> callback URL, per application. */
    urls: (app: string) => `${base}:app:${app}:urls`,
    /** Pub/sub channel: an application's name when its instances or types changed (not on a plain renewal). */
    changes: `${prefix}:svc:changes`,
  };
}

interface RegistryScripts {
  dqServiceRegister(...args: (string | number)[]): Promise<[number, string | number, string?]>;
  dqServiceInstances(instances: string, urls: string): Promise<(string | number)[]>;
  dqServiceLeave(instances: string, urls: string, id: string, channel: string, app: string): Promise<number>;
}


function checkName(name: string, value: unknown): string {
  if (typeof value !== 'string' || !PLAIN_NAME.test(value)) {
    throw new InvalidArgumentError(name, `expected ${PLAIN_NAME_RULE}`);
  }
  return value;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Service mode's registry in Redis: applications, the task types each owns (with the options the scheduler
 * runs them with) and their live instances (callback URL, heartbeat by the Redis clock). Client instances
 * register and renew themselves; the scheduler reads it.
 */
export class ServiceRegistry {
  readonly keys: ReturnType<typeof serviceKeys>;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.keys = serviceKeys(prefix);
  }

  private get scripts(): RegistryScripts {
    return this.redis as unknown as RegistryScripts;
  }

  /**
   * Registers `app`'s types and, unless `instance` is null, registers or renews that instance, live for
   * `ttlMs` from now (Redis clock); tells the schedulers when that changed anything (not on a plain renewal).
   * @throws TypeOwnedError when a type belongs to another application (nothing is written)
   * @throws InvalidTaskTypeError for a type name the queues refuse
   * @throws InvalidArgumentError naming a bad argument
   */
  async register(app: string, instance: ServiceInstance | null, types: Record<string, ServiceTypeOptions>, ttlMs: number): Promise<void> {
    checkName('app', app);
    if (instance !== null) {
      checkName('instance.id', instance?.id);
      if (typeof instance.url !== 'string' || !/^https?:\/\/\S+$/.test(instance.url)) throw new InvalidArgumentError('instance.url', 'expected an http(s) URL');
    }
    if (!Number.isInteger(ttlMs) || ttlMs < 100) throw new InvalidArgumentError('ttlMs', 'expected an integer of at least 100');
    if (!isPlainObject(types) || !Object.values(types).every(isPlainObject)) throw new InvalidArgumentError('types', 'expected { [type]: options object }');
    const pairs = Object.entries(types).flatMap(([type, options]) => {
      assertTaskType(type);
      return [type, JSON.stringify(options)];
    });
    const k = this.keys;
    const [ok, type, owner] = await this.scripts.dqServiceRegister(
      k.apps, k.owners, k.types(app), k.instances(app), k.urls(app), app, instance?.id ?? '', instance?.url ?? '', ttlMs, k.changes, ...pairs,
    );
    if (ok !== 1) throw new TypeOwnedError(String(type), String(owner), app);
  }

  /** Removes an instance (it leaves gracefully): no more deliveries go to it. */
  async leave(app: string, instanceId: string): Promise<void> {
    checkName('app', app);
    checkName('instanceId', instanceId);
    await this.scripts.dqServiceLeave(this.keys.instances(app), this.keys.urls(app), instanceId, this.keys.changes, app);
  }

  /** The registered applications. */
  async apps(): Promise<string[]> {
    return (await this.redis.smembers(this.keys.apps)).sort();
  }

  /** The types `app` registered, with their options. */
  async types(app: string): Promise<Record<string, ServiceTypeOptions>> {
    const raw = await this.redis.hgetall(this.keys.types(app));
    return Object.fromEntries(Object.entries(raw).map(([type, json]) => [type, JSON.parse(json) as ServiceTypeOptions]));
  }

  /** The application that owns `type`, or null. */
  async ownerOf(type: string): Promise<string | null> {
    return this.redis.hget(this.keys.owners, type);
  }

  /** The live instances of `app` (heartbeat not expired by the Redis clock), in id order. */
  async instances(app: string): Promise<ServiceInstance[]> {
    const [, ...flat] = await this.scripts.dqServiceInstances(this.keys.instances(app), this.keys.urls(app));
    const out: ServiceInstance[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push({ id: String(flat[i]), url: String(flat[i + 1]) });
    return out;
  }
}
