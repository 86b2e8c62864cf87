import type { MemoryEngine } from './memory-engine';
import type { MemoryRunner } from './memory-runner';
import type { TestClock } from './test-clock';

/**
 * Auto mode of the testing module: tasks run as they fall due. A change (a submit, a resume) or an end runs
 * what is due now; a timer waits for the next due time (`setTimeout`, so Jest's fake timers drive it too).
 * The timer does not hold the process open and is cleared at close.
 */
export class AutoRun {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = true;
  /** A change came while a run was on: the run may have looked before it. */
  private changedMeanwhile = false;
  private readonly idleWaiters = new Set<() => void>();

  constructor(
    private readonly engine: MemoryEngine,
    private readonly runner: MemoryRunner,
    private readonly clock: TestClock,
  ) {
    engine.onChange(() => this.kick());
  }

  start(): void {
    this.stopped = false;
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const resolve of this.idleWaiters) resolve();
    this.idleWaiters.clear();
  }

  /** Resolves once nothing runs and nothing is due now. */
  idle(): Promise<void> {
    if (!this.running || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.add(resolve));
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.changedMeanwhile = true;
      return;
    }
    this.changedMeanwhile = false;
    this.running = this.runner.runDue().then(
      () => this.ranOut(),
      () => this.ranOut(),
    );
  }

  private ranOut(): void {
    this.running = undefined;
    if (this.stopped) return;
    if (this.changedMeanwhile) return this.kick();
    clearTimeout(this.timer);
    // NOTE: the clock moved while the run ended: a task that fell due after its last look wakes it at once
    const next = this.runner.nextDueAt(false, true);
    if (next !== null) {
      this.timer = setTimeout(() => this.kick(), Math.max(0, next - this.clock.now()));
      this.timer.unref?.();
    }
    for (const resolve of this.idleWaiters) resolve();
    this.idleWaiters.clear();
  }
}
