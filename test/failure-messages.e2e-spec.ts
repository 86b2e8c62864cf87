/**
 * A failed attempt's error message is bounded (MAX_MESSAGE_BYTES, 4 KiB) wherever the library keeps or sends
 * it: the dead letter, the event-stream entry, the log line, service mode's result line. A handler that throws
 * a 1 MB message must not put 1 MB into Redis per failure (10,000 entries per stream: gigabytes).
 *
 * Failure matrix cell (docs/failure-matrix.md, events): "Long values: error messages": delay and ordered
 * tasks whose handler throws a 1 MB message, on the single server and the cluster.
 */
import { Logger, type LoggerService } from '@nestjs/common';
import { MAX_MESSAGE_BYTES, type Task } from 'nestjs-distributed-queue';
import { connect, useStartedApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

const HUGE = 'm'.repeat(1_000_000);

class LongestLine implements LoggerService {
  longest = 0;
  private take = (message: unknown): void => void (this.longest = Math.max(this.longest, String(message).length));
  log = this.take;
  warn = this.take;
  error = this.take;
  debug = this.take;
  verbose = this.take;
}

describe.each(getTargets().map((t) => [t.name, t] as const))('a 1 MB error message on %s', (_name, target) => {
  const start = useStartedApps();
  afterEach(() => Logger.overrideLogger(['error']));

  it('is kept bounded in the dead letter, the stream entry and the log line, for delay and ordered tasks', async () => {
    const prefix = uniquePrefix('msg');
    const fail = (): never => {
      throw new Error(HUGE);
    };
    const app = await start({ connection: target.connection, keyPrefix: prefix, route: routeTestOptions(prefix, 'm1', 2) }, [
      workerClass('msg.delay', { maxAttempts: 1 }, fail),
      workerClass('msg.ordered', { ordered: true, maxAttempts: 1 }, (_task: Task) => fail()),
    ]);
    const logger = new LongestLine();
    Logger.overrideLogger(logger);
    await app.submit.submit('msg.delay', {}, { id: 'd1' });
    await app.submit.submitOrdered('msg.ordered', 'k', {}, { id: 'o1' });
    const dead = await waitFor(async () => (await app.inspect.listDead('msg.delay')).tasks[0], { timeoutMs: 10_000, message: 'the delay task dead' });
    const ordered = await waitFor(async () => (await app.inspect.listOrderedDead()).find((t) => t.id === 'o1'), { timeoutMs: 10_000, message: 'the ordered task dead' });
    for (const message of [dead.error.message, ordered.error.message]) {
      expect(Buffer.byteLength(message)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
      expect(message).toMatch(/^m+ … \(\d+ more characters\)$/);
    }
    // The stream entries (what fleet listeners and the history read) hold the bounded message too.
    const redis = connect(target);
    try {
      const entries = (await redis.xrevrange(`${prefix}:{${prefix}:msg.delay}:log`, '+', '-', 'COUNT', 10)) as [string, string[]][];
      expect(entries.length).toBeGreaterThan(0);
      for (const [, fields] of entries) expect(fields.join('').length).toBeLessThan(16_384);
    } finally {
      redis.disconnect();
    }
    expect(logger.longest).toBeLessThan(16_384);
  }, 60_000);
});
