import { DelayCleaningStore } from '../delay/delay-cleaning.store';
import { noRedis } from '../redis/no-redis';
import type { MemoryEngine } from './memory-engine';

/**
 * The cleaning calls of `QueueControlService` (drain, purgeDead, obliterate) on the in-memory engine, in
 * the batches the real store takes them in.
 */
export class MemoryCleaningStore extends DelayCleaningStore {
  constructor(
    private readonly engine: MemoryEngine,
    private readonly hasWorker: (type: string) => boolean,
    /** Forgets a type's groups and limit overrides, as the real obliterate deletes them. */
    private readonly forgetSettings: (type: string) => void,
  ) {
    super(noRedis(), 'memory');
  }

  /** Removes up to `batch` waiting tasks; they end as cancelled ones do (a waiter hears it). */
  override async drain(type: string, batch: number): Promise<number> {
    const queue = this.engine.type(type);
    const drained = queue.waiting().slice(0, batch);
    for (const task of drained) {
      queue.remove(task);
      this.engine.ended(task, 'cancelled', task.attempts);
    }
    return drained.length;
  }

  override async purgeDead(type: string, ageMs: number, batch: number): Promise<number> {
    const queue = this.engine.type(type);
    const before = this.engine.clock.now() - ageMs;
    const purged = [...queue.dead].map((id) => queue.tasks.get(id)!).filter((t) => (t.diedAt ?? 0) <= before).slice(0, batch);
    for (const task of purged) queue.remove(task);
    return purged.length;
  }

  /** The consumers of the type: this application's worker, if it has one (no other instance exists). */
  override async liveConsumers(type: string): Promise<number> {
    return this.hasWorker(type) ? 1 : 0;
  }

  override async obliterate(type: string): Promise<number> {
    const queue = this.engine.type(type);
    const count = queue.tasks.size;
    this.engine.forget(type);
    this.forgetSettings(type);
    return count;
  }
}
