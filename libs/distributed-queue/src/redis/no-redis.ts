import { NoRedisConnectionError } from '../errors';
import type { RedisClient } from './script-loader';

/** Calls that are part of a client's life, not of talking to Redis: harmless without one. */
const LIFECYCLE: Record<string, unknown> = {
  status: 'end',
  on: undefined,
  off: undefined,
  once: undefined,
  removeListener: undefined,
  defineCommand: undefined,
};

/** Names that are looked up on any object (Nest's lifecycle hooks, inspection): absent here. */
const NOT_COMMANDS = new Set([
  'then', 'constructor', 'toJSON', 'inspect', 'onModuleInit', 'onApplicationBootstrap', 'onModuleDestroy',
  'beforeApplicationShutdown', 'onApplicationShutdown',
]);

/**
 * The Redis client of an application in service mode with `service.url`: it has none. Listening, defining
 * scripts and closing do nothing; any command throws `NoRedisConnectionError` naming it (inside the
 * library's async methods: a rejection).
 */
export function noRedis(): RedisClient {
  const target = {} as Record<string | symbol, unknown>;
  const client: unknown = new Proxy(target, {
    get(_target, property) {
      if (typeof property !== 'string' || NOT_COMMANDS.has(property)) return undefined;
      if (property in LIFECYCLE) return property === 'status' ? LIFECYCLE.status : () => client;
      if (property === 'quit') return async () => 'OK';
      if (property === 'disconnect') return () => undefined;
      return () => {
        throw new NoRedisConnectionError(property);
      };
    },
  });
  return client as RedisClient;
}
