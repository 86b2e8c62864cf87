import { consumerHealth, overallHealth, routeMemberHealth, startupHealth } from './health-checks';

const consumer = (lastContactAt: number, visibilityTimeoutMs = 30_000, pollIntervalMs = 1000) =>
  ({ type: 't', lastContactAt, options: { visibilityTimeoutMs, pollIntervalMs } });

describe('health checks', () => {
  it('a consumer is up while its last contact is within its visibility timeout (or two polls, if longer)', () => {
    expect(consumerHealth(consumer(100_000), 130_000)).toEqual({ status: 'up', lastContactMsAgo: 30_000, limitMs: 30_000 });
    expect(consumerHealth(consumer(100_000), 130_001)).toMatchObject({ status: 'down', message: 'no contact with Redis for 30001 ms (limit 30000 ms)' });
    expect(consumerHealth(consumer(100_000, 1000, 60_000), 200_000)).toMatchObject({ status: 'up', limitMs: 120_000 });
    expect(consumerHealth(consumer(100_000), 90_000)).toMatchObject({ status: 'up', lastContactMsAgo: 0 });
  });

  it('a route machine is up while its heartbeat is younger than offlineMs', () => {
    expect(routeMemberHealth('q', 'm1', 10_000, 5000, 14_999)).toEqual({ status: 'up', queue: 'q', machine: 'm1', limitMs: 5000, lastHeartbeatMsAgo: 4999 });
    expect(routeMemberHealth('q', 'm1', 10_000, 5000, 15_000)).toMatchObject({ status: 'down', message: 'no heartbeat reached Redis for 5000 ms (offline after 5000 ms)' });
    expect(routeMemberHealth('q', 'm1', 0, 5000, 15_000)).toMatchObject({ status: 'down', message: 'no heartbeat reached Redis yet' });
  });

  it('is up only when every check is, and names each failed one', () => {
    expect(overallHealth([])).toEqual({ status: 'up' });
    expect(overallHealth([['redis', { status: 'up' }], ['consumer a', { status: 'up' }]])).toEqual({ status: 'up' });
    expect(overallHealth([['redis', { status: 'down', message: 'PING: no reply' }], ['consumer a', { status: 'up' }], ['route', { status: 'down' }]]))
      .toEqual({ status: 'down', message: 'redis: PING: no reply; route: down' });
  });
});

describe('startupHealth', () => {
  const since = 1_000_000;
  it('is up once every part started', () => {
    expect(startupHealth({ ready: true, pending: [], since }, 'h:1', since + 5000)).toEqual({ status: 'up' });
  });
  it('says what it waits for, since when, why, and what has not started', () => {
    expect(startupHealth({ ready: false, pending: ['workers', 'route queue'], since, reason: 'connect ECONNREFUSED' }, 'h:1', since + 12_400)).toEqual({
      status: 'down',
      message: 'waiting for Redis at h:1 for 12 s: connect ECONNREFUSED; not started yet: workers, route queue',
      pending: ['workers', 'route queue'],
      waitingMs: 12_400,
    });
  });
  it('names the part that failed to start', () => {
    const failed = 'route queue failed to start: shrinking';
    expect(startupHealth({ ready: false, pending: ['route queue'], since, reason: failed, failed }, 'h:1', since)).toEqual({ status: 'down', message: failed, pending: ['route queue'] });
  });
});
