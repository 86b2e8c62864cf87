import { delayQueueKeys } from '../redis/queue-keys';
import type { RedisClient } from '../redis/script-loader';

type Arg = string | number;
/** Chunks of the waiting set unlinked per call, and a bound on the calls (10^8 tasks). */
const CHUNK_PAGE = 1000;
const MAX_CHUNK_PAGES = 1000;
/** Group names (and their queues) removed per call, and a bound on the calls (10^8 groups). */
const GROUP_PAGE = 1000;
const MAX_GROUP_PAGES = 100_000;
/** The fields of a type's limits hash that obliterate deletes: all but what the workers' options configure. */
const LIMITS_STATE = ['rl!', 'gc!', 'tat', 'gcw', 'until'];
/** The cleaning scripts of `scripts/delay/`, as `defineScripts` adds them to the client. */
interface CleaningScripts {
  dqDelayDrain(...args: Arg[]): Promise<number>;
  dqDelayDeadPurge(...args: Arg[]): Promise<number>;
  dqDelayLiveConsumers(...args: Arg[]): Promise<number>;
  dqDelayObliterateGroups(...args: Arg[]): Promise<number>;
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
   * Deletes every key of the type (request keys expire on their own; the limits its workers' options configure
   * stay) with UNLINK: Redis frees big values
   * in the background, so a type with a million tasks does not block it. A bounded step per call: the
   * waiting set's and the turn queue's chunks a page of their index at a time, the groups' queues a page of
   * names at a time (see obliterate-groups-1.lua). Returns the keys deleted (the groups' queues not counted).
   */
  async obliterate(type: string): Promise<number> {
    const k = delayQueueKeys(this.prefix, type);
    const w = k.waiting;
    const turns = `${w}:q`;
    let deleted = (await this.unlinkChunks(w)) + (await this.unlinkChunks(turns));
    for (let page = 0; page < MAX_GROUP_PAGES; page++) {
      if (Number(await this.scripts.dqDelayObliterateGroups(w, GROUP_PAGE)) === 0) break;
    }
    // NOTE: all keys of a type share its hash tag: one command, in one slot, on a cluster too. The groups' keys
    // went with the script's last call.
    const rest = [
      w, k.waitingCount, turns, `${turns}:n`, `${w}:pc`, `${w}:fp`, `${w}:fd`, k.legacyWaiting, k.active, k.jobs,
      `${k.jobs}:pg`, `${k.jobs}:lg`, k.running, k.seq, k.dead, k.errors, k.done, k.results, k.awaited, k.dedupe, k.dedupeIndex, k.paused,
      k.log, k.followed, k.recorded, k.historyLock, k.consumers,
    ];
    deleted += await this.client.unlink(...rest);
    // NOTE: the limits the workers' options configure stay (written at a worker's start only: live workers of a
    // forced obliterate keep theirs); an operator's overrides and the limits' state go.
    await this.client.hdel(k.limits, ...LIMITS_STATE);
    return deleted;
  }

  /** Unlinks the chunks of a chunked set (the waiting set, the turn queue) and empties its index. */
  private async unlinkChunks(index: string): Promise<number> {
    let deleted = 0;
    for (let page = 0; page < MAX_CHUNK_PAGES; page++) {
      const chunks = await this.client.zrange(index, 0, CHUNK_PAGE - 1);
      if (chunks.length === 0) break;
      // the chunk keys are `<index>:<chunk tag>` (see waiting-set.lua)
      deleted += await this.client.unlink(...chunks.map((tag) => `${index}:${tag}`));
      await this.client.zrem(index, ...chunks);
    }
    return deleted;
  }
}
