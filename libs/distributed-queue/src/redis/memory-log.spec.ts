import { RedisOutOfMemoryError } from '../errors';
import { MemoryLog } from './memory-log';
import { countedInOutage, PROBE_MS, reportFailure, tagOutage } from './outage-log';

const OOM = "OOM command not allowed when used memory > 'maxmemory'.";

describe('MemoryLog', () => {
  let lines: { level: string; message: string }[];
  const logger = { log: (m: string) => void lines.push({ level: 'log', message: m }), warn: (m: string) => void lines.push({ level: 'warn', message: m }) };
  let over: boolean | undefined;
  let memory: MemoryLog;
  const refusal = (): RedisOutOfMemoryError => tagOutage(new RedisOutOfMemoryError('dq:x:commands', '127.0.0.1:1', OOM), memory);
  const probes = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await jest.advanceTimersByTimeAsync(PROBE_MS);
  };

  beforeEach(() => {
    jest.useFakeTimers();
    lines = [];
    over = true;
    memory = new MemoryLog(logger, 'dq:x:commands', '127.0.0.1:1', async () => over);
  });
  afterEach(() => {
    memory.end();
    jest.useRealTimers();
  });

  it('warns at the first refusal only, counts the others, and says once when the server is under its limit again', async () => {
    for (const what of ['heartbeat', 'heartbeat', 'take']) reportFailure(logger, what, refusal());
    expect(lines).toEqual([{ level: 'warn', message: expect.stringMatching(/^Redis at 127\.0\.0\.1:1 is out of memory \(connection dq:x:commands\).*OOM command not allowed.*logged once/) }]);
    await probes(3);
    expect(lines).toHaveLength(1);
    over = false;
    await probes(1);
    expect(lines[1]).toEqual({ level: 'log', message: expect.stringMatching(/accepts writes again .*after .*; 3 call\(s\) of the library failed meanwhile \(heartbeat ×2, take ×1\)$/) });
    await probes(3);
    expect(lines).toHaveLength(2);
    // A later time out of memory is reported again.
    reportFailure(logger, 'take', refusal());
    expect(lines.map((l) => l.level)).toEqual(['warn', 'log', 'warn']);
  });

  it('a handler\'s refused call reported after its attempt begins the time, or is counted in it; after it ends, an older one is dropped', async () => {
    const early = refusal();
    expect(countedInOutage('[t] attempt', early)).toBe(true);
    expect(lines.map((l) => l.level)).toEqual(['warn']);
    expect(countedInOutage('[t] attempt', refusal())).toBe(true);
    over = false;
    await probes(1);
    expect(lines[1].message).toMatch(/2 call\(s\) .*\[t\] attempt ×2/);
    // failed before the line that said it ended: already reported
    expect(countedInOutage('[t] attempt', early)).toBe(true);
    expect(lines).toHaveLength(2);
    // other errors are not the log's
    expect(countedInOutage('[t] attempt', new Error(OOM))).toBe(false);
  });

  it('when the memory cannot be read (INFO refused): ends once no call was refused for two probes', async () => {
    over = undefined;
    reportFailure(logger, 'heartbeat', refusal());
    await probes(1);
    reportFailure(logger, 'heartbeat', refusal());
    await probes(2);
    expect(lines).toHaveLength(1);
    await probes(1);
    expect(lines.map((l) => l.level)).toEqual(['warn', 'log']);
  });

  it('says nothing once the application shuts down', () => {
    const closing = new MemoryLog(logger, 'dq:x:commands', '127.0.0.1:1', async () => over, () => true);
    reportFailure(logger, 'heartbeat', tagOutage(new RedisOutOfMemoryError('dq:x:commands', '127.0.0.1:1', OOM), closing));
    expect(lines).toEqual([]);
    closing.end();
  });
});
