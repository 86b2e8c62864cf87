import { InvalidOptionsError } from '../errors';
import { resolveEventsOptions } from './resolve-observability';

describe('resolveEventsOptions', () => {
  it('completes the defaults', () => {
    expect(resolveEventsOptions(undefined)).toEqual({ stream: true, streamMaxLen: 10_000, followIntervalMs: 200 });
    expect(resolveEventsOptions({ stream: false, streamMaxLen: 10, followIntervalMs: 10 })).toEqual({ stream: false, streamMaxLen: 10, followIntervalMs: 10 });
  });

  it('refuses bad events options at start-up, naming the option', () => {
    const cases: [object, string][] = [
      [{ streamMaxLen: 9 }, 'events.streamMaxLen'],
      [{ streamMaxLen: 10_000_001 }, 'events.streamMaxLen'],
      [{ streamMaxLen: 100.5 }, 'events.streamMaxLen'],
      [{ streamMaxLen: '100' }, 'events.streamMaxLen'],
      [{ followIntervalMs: 9 }, 'events.followIntervalMs'],
      [{ followIntervalMs: Number.NaN }, 'events.followIntervalMs'],
      [{ stream: 'yes' }, 'events.stream'],
      [{ streamMaxlen: 100 }, 'streamMaxlen'],
    ];
    for (const [events, option] of cases) {
      let error: unknown;
      try {
        resolveEventsOptions(events as never);
      } catch (e) {
        error = e;
      }
      expect([events, error]).toEqual([events, expect.any(InvalidOptionsError)]);
      expect([events, (error as Error).message]).toEqual([events, expect.stringContaining(option)]);
    }
  });
});
