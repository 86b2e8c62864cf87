import { InvalidArgumentError } from '../errors';

/** How the in-memory engine tells time and when it runs tasks (see `DistributedQueueTestingOptions.run`). */
export type TestingMode = 'manual' | 'auto';

/**
 * The in-memory engine's clock. In `manual` mode it stands still from its start time and moves only when the
 * test moves it (`advanceBy`, `setTime`). In `auto` mode it is `Date.now()` (so Jest's fake timers move it as
 * well) plus whatever the test added with `advanceBy`.
 */
export class TestClock {
  private frozenAt: number;
  private offset = 0;

  constructor(
    readonly mode: TestingMode,
    start: number,
  ) {
    this.frozenAt = start;
  }

  /** Epoch ms, as the engine sees it (what `Redis TIME` is to the real engine). */
  now(): number {
    return this.mode === 'manual' ? this.frozenAt : Date.now() + this.offset;
  }

  /** Moves the clock `ms` forward. @throws InvalidArgumentError for a negative or non-finite `ms` */
  forward(ms: number): void {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) throw new InvalidArgumentError('ms', `must be a finite number from 0, got ${String(ms)}`);
    if (this.mode === 'manual') this.frozenAt += ms;
    else this.offset += ms;
  }

  /** Moves the clock to `at` (never back). */
  moveTo(at: number): void {
    const now = this.now();
    if (at > now) this.forward(at - now);
  }
}

/** A time option (epoch ms or Date) as epoch ms. @throws InvalidArgumentError */
export function epochMs(name: string, value: number | Date): number {
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) throw new InvalidArgumentError(name, `must be an epoch ms or a Date, got ${String(value)}`);
  return Math.floor(ms);
}
