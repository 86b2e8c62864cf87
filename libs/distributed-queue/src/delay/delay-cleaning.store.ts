import { delayQueueKeys } from '../redis/queue-keys';
import type { RedisClient } from '../redis/script-loader';

type Arg = string | number;
/** Chunks of the waiting set unlinked per call, and a bound on the calls (10^8 tasks). */
const CHUNK_PAGE = 1000;
const MAX_CHUNK_PAGES = 1000;
/** The cleaning scripts of `scripts/delay/`, as `defineScripts` adds them to the client. */
interface CleaningScripts {
  dqDelayDrain(...args: Arg[]): Promise<number>;
  dqDelayDeadPurge(...args: Arg[]): Promise<number>;
  dqDelayLiveConsumers(...args: Arg[]): Promise<number>;
}

/**
 * The delay queue's cleaning commands (drain, purge dead letters, obliterate) and its presence check: each
 * call does a bounded amount of work; the caller loops. Keys as `DelayQueueStore` builds them.
 */
export class DelayCleaningStore {
  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
  ) {}

  private get scripts(): CleaningScripts {
    return this.client as unknown as CleaningScripts;
  }

  /** Removes up to `batch` waiting tasks (delayed and ready); returns how many. */
  async drain(type: string, batch: number): Promise<number> {
    const k = delayQueueKeys(this.prefix, type);
    return Number(await this.scripts.dqDelayDrain(k.waiting, k.jobs, k.errors, batch));
  }

  /** Deletes up to `batch` dead letters that died `ageMs` ago or earlier; returns how many. */
  async purgeDead(type: string, ageMs: number, batch: number): Promise<number> {
    const k = delayQueueKeys(this.prefix, type);
    return Number(await this.scripts.dqDelayDeadPurge(k.dead, k.jobs, k.errors, ageMs, batch));
  }

  /** Consumers of the type whose presence has not expired (Redis clock). */
  async liveConsumers(type: string): Promise<number> {
    return Number(await this.scripts.dqDelayLiveConsumers(delayQueueKeys(this.prefix, type).consumers));
  }

  /**
   * Deletes every key of the type (request keys expire on their own) with UNLINK: Redis frees big values
   * in the background, so a type with a million tasks does not block it. Returns the keys deleted.
   */
  async obliterate(type: string): Promise<number> {
    const k = delayQueueKeys(this.prefix, type);
    let deleted = 0;
    // The waiting set's chunks, a page of its index at a time (the index empties as its chunks go).
    for (let page = 0; page < MAX_CHUNK_PAGES; page++) {
      const chunks = await this.client.zrange(k.waiting, 0, CHUNK_PAGE - 1);
      if (chunks.length === 0) break;
      deleted += await this.client.unlink(...chunks.map((tag) => k.waitingChunk(tag)));
      await this.client.zrem(k.waiting, ...chunks);
    }
    // NOTE: all keys of a type share its hash tag: one command, in one slot, on a cluster too.
    const rest = [k.waiting, k.waitingCount, k.legacyWaiting, k.active, k.jobs, k.running, k.seq, k.dead, k.errors, k.done, k.results, k.dedupe, k.dedupeIndex, k.paused, k.log, k.consumers];
    return deleted + (await this.client.unlink(...rest));
  }
}
