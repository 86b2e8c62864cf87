import { NoRedisConnectionError } from '../errors';
import { closeRedisClient } from './redis-connection';
import { noRedis } from './no-redis';

describe('noRedis', () => {
  it('refuses every command with NoRedisConnectionError naming it', () => {
    const client = noRedis() as unknown as Record<string, (...args: unknown[]) => unknown>;
    expect(() => client.get('k')).toThrow(NoRedisConnectionError);
    expect(() => client.dqDelayTake()).toThrow('"dqDelayTake" needs a Redis connection');
  });

  it('is harmless to listen on, define scripts on, close, and to Nest (no lifecycle hooks)', async () => {
    const client = noRedis();
    expect(client.on('ready', () => undefined)).toBe(client);
    client.defineCommand('x', { numberOfKeys: 0, lua: 'return 1' });
    await closeRedisClient(client);
    expect((client as unknown as Record<string, unknown>).onModuleInit).toBeUndefined();
    expect((client as unknown as Record<string, unknown>).then).toBeUndefined();
  });
});
