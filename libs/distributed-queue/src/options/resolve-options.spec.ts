import { InvalidOptionsError, InvalidTaskTypeError } from '../errors';
import { assertTaskType, DEFAULT_WORKER_OPTIONS, mergeWorkerOptions, resolveModuleOptions } from './resolve-options';

describe('resolveModuleOptions', () => {
  it('applies the documented defaults', () => {
    const resolved = resolveModuleOptions({});
    expect(resolved).toMatchObject({
      connection: 'redis://127.0.0.1:6379', keyPrefix: 'dq', workers: true, shutdownTimeoutMs: 10_000,
      strictTypes: true, maxPayloadBytes: 1024 * 1024, keepDone: 1000, maxProgressBytes: 4096, taskLogs: { maxLines: 200, maxBytes: 65_536 },
    });
    expect(resolved.defaults).toEqual({
      ordered: false, concurrency: 1, timeoutMs: 60_000, maxAttempts: 3, visibilityTimeoutMs: 30_000, pollIntervalMs: 1000,
      backoff: { type: 'exponential', delayMs: 1000, maxDelayMs: 3_600_000, jitter: 0.2 },
    });
  });

  it.each([
    [{ nope: 1 }, 'nope'],
    [{ keyPrefix: 'a{b' }, 'keyPrefix'],
    [{ keyPrefix: '' }, 'keyPrefix'],
    [{ workers: 'yes' }, 'workers'],
    [{ maxPayloadBytes: 0 }, 'maxPayloadBytes'],
    [{ keepDone: 1.5 }, 'keepDone'],
    [{ maxProgressBytes: 1 }, 'maxProgressBytes'],
    [{ taskLogs: 5 }, 'taskLogs'],
    [{ taskLogs: { lines: 5 } }, 'taskLogs.lines'],
    [{ taskLogs: { maxLines: 10_001 } }, 'taskLogs.maxLines'],
    [{ taskLogs: { maxBytes: 1023 } }, 'taskLogs.maxBytes'],
    [{ taskLogs: { maxBytes: 2 * 1024 * 1024 } }, 'taskLogs.maxBytes'],
    [{ connection: { cluster: [] } }, 'connection.cluster'],
    [{ defaults: { concurrency: 1001 } }, 'defaults.concurrency'],
    [{ defaults: { backoff: { jitter: 2 } } }, 'defaults.backoff.jitter'],
    [{ defaults: { backoff: { delay: 5 } } }, 'defaults.backoff.delay'],
    [{ types: { 'a b': {} } }, 'types.a b'],
    [{ types: { t: { pollIntervalMs: 1 } } }, 'types.t.pollIntervalMs'],
    [{ route: {} }, 'route.qId'],
    [{ route: { qId: 'q', partitions: 0 } }, 'route.partitions'],
    [{ route: { qId: 'q', rejectStrategy: 'Drop' } }, 'route.rejectStrategy'],
    [{ route: { qId: 'q', heartbeatMs: 1000, offlineMs: 1000 } }, 'route.offlineMs'],
    [{ route: { qId: 'q', heartbeatMs: 500, offlineMs: 2000, idleMs: 1000 } }, 'route.idleMs'],
    [{ route: { qId: 'q', num: 8 } }, 'route.num'],
  ])('rejects %j naming %s', (options, name) => {
    expect(() => resolveModuleOptions(options as never)).toThrow(InvalidOptionsError);
    expect(() => resolveModuleOptions(options as never)).toThrow(`"${name}"`);
  });

  it('applies the seed defaults to the route queue', () => {
    expect(resolveModuleOptions({ route: { qId: 'q' } }).route).toMatchObject({
      qId: 'q', partitions: 8, maxPartitionSize: 50_000, rejectStrategy: 'Discard', offlineMs: 150_000, idleMs: 300_000,
      luaLog: false, machineId: expect.stringMatching(/:\d+:[0-9a-f]{6}$/),
    });
  });

  it('merges layers field by field, backoff included', () => {
    const merged = mergeWorkerOptions(DEFAULT_WORKER_OPTIONS, { concurrency: 5, backoff: { delayMs: 10 } }, { concurrency: undefined, timeoutMs: 7 });
    expect(merged).toMatchObject({ concurrency: 5, timeoutMs: 7, backoff: { type: 'exponential', delayMs: 10, jitter: 0.2 } });
  });
});

describe('assertTaskType', () => {
  it.each(['', 'a{b', 'a}b', 'a b', 'x'.repeat(201), 5])('rejects %j', (type) => {
    expect(() => assertTaskType(type)).toThrow(InvalidTaskTypeError);
  });
  it('accepts dotted names', () => {
    expect(() => assertTaskType('order.close')).not.toThrow();
  });
});
