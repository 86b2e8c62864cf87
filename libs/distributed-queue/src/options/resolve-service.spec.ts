import { InvalidOptionsError } from '../errors';
import type { DistributedQueueModuleOptions } from '../interfaces';
import { resolveModuleOptions } from './resolve-options';

const secret = 'a-secret-of-16-chars';
const client = { appName: 'shop', secret, publicUrl: 'http://10.0.0.7:3000' };

const refused = (options: DistributedQueueModuleOptions): string | undefined => {
  try {
    resolveModuleOptions(options);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionsError);
    return (error as InvalidOptionsError).option;
  }
  return undefined;
};

describe('service mode options', () => {
  it('defaults to plugin mode', () => {
    expect(resolveModuleOptions({})).toMatchObject({ mode: 'plugin', service: null, scheduler: null });
  });

  it('completes client options with their documented defaults', () => {
    const { service, strictTypes } = resolveModuleOptions({ mode: 'service', service: { ...client, publicUrl: 'https://shop.internal:8443/' } });
    expect(service).toMatchObject({
      appName: 'shop', publicUrl: 'https://shop.internal:8443', callbackPath: '/dq/deliveries', heartbeatMs: 5000, instanceTtlMs: 15_000,
    });
    expect(service!.instanceId).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:-]*-\d+-[0-9a-f]{6}$/);
    expect(strictTypes).toBe(true);
  });

  it('takes the scheduler URL instead of a Redis connection', () => {
    const { service } = resolveModuleOptions({ mode: 'service', service: { ...client, url: 'http://scheduler:4000/' } });
    expect(service).toMatchObject({ url: 'http://scheduler:4000', schedulerPath: '/dq/service' });
  });

  it('completes scheduler options; the scheduler submits whatever the registry holds', () => {
    const resolved = resolveModuleOptions({ mode: 'scheduler', scheduler: { secret } });
    expect(resolved.scheduler).toEqual({
      secret, syncIntervalMs: 1000, deliveryGraceMs: 2000, visibilityTimeoutMs: 30_000, clientPath: '/dq/service', maxRequestBytes: 4 * 1024 * 1024,
    });
    expect(resolved.strictTypes).toBe(false);
  });

  it('names the option at fault', () => {
    expect(refused({ mode: 'remote' as 'service' })).toBe('mode');
    expect(refused({ mode: 'service' })).toBe('service');
    expect(refused({ service: client })).toBe('service');
    expect(refused({ mode: 'service', scheduler: { secret } , service: client })).toBe('scheduler');
    expect(refused({ mode: 'service', service: { ...client, appName: undefined as unknown as string } })).toBe('service.appName');
    expect(refused({ mode: 'service', service: { ...client, appName: 'my app' } })).toBe('service.appName');
    expect(refused({ mode: 'service', service: { ...client, secret: 'short' } })).toBe('service.secret');
    expect(refused({ mode: 'service', service: { ...client, publicUrl: 'http://h:1/path' } })).toBe('service.publicUrl');
    expect(refused({ mode: 'service', service: { ...client, callbackPath: 'dq' } })).toBe('service.callbackPath');
    expect(refused({ mode: 'service', service: { ...client, heartbeatMs: 1000, instanceTtlMs: 1000 } })).toBe('service.instanceTtlMs');
    expect(refused({ mode: 'service', service: { ...client, extra: 1 } as never })).toBe('service.extra');
    expect(refused({ mode: 'scheduler' })).toBe('scheduler');
    expect(refused({ mode: 'service', service: { ...client, url: 'scheduler:4000' } })).toBe('service.url');
    expect(refused({ mode: 'service', connection: 'redis://h:6379', service: { ...client, url: 'http://scheduler:4000' } })).toBe('connection');
    expect(refused({ mode: 'service', history: { connection: 'postgres://h/db' }, service: { ...client, url: 'http://scheduler:4000' } })).toBe('history');
    expect(refused({ mode: 'scheduler', scheduler: { secret, visibilityTimeoutMs: 10 } })).toBe('scheduler.visibilityTimeoutMs');
  });

  it('sizes requests by bytes: maxRequestBytes at least one task of the largest payload, 4 MiB by default or more', () => {
    expect(resolveModuleOptions({ mode: 'service', service: client }).service!.maxRequestBytes).toBe(4 * 1024 * 1024);
    expect(resolveModuleOptions({ mode: 'service', maxPayloadBytes: 8 * 1024 * 1024, service: client }).service!.maxRequestBytes).toBe(8 * 1024 * 1024 + 64 * 1024);
    expect(resolveModuleOptions({ mode: 'service', maxPayloadBytes: 1000, service: { ...client, maxRequestBytes: 1000 + 64 * 1024 } }).service!.maxRequestBytes).toBe(1000 + 64 * 1024);
    expect(refused({ mode: 'service', service: { ...client, maxRequestBytes: 1024 * 1024 } })).toBe('service.maxRequestBytes');
    expect(refused({ mode: 'scheduler', scheduler: { secret, maxRequestBytes: 100 * 1024 } })).toBe('scheduler.maxRequestBytes');
    expect(resolveModuleOptions({ mode: 'scheduler', maxPayloadBytes: 2 * 1024 * 1024, scheduler: { secret } }).scheduler!.maxRequestBytes).toBe(4 * 1024 * 1024);
  });
});
