import type { RedisClient } from '../redis/script-loader';
import type { RouteKeys } from './route-keys';
import type { RouteStore } from './route.store';

type Arg = string | number;
/** The control scripts of `scripts/route/`, as `defineScripts` adds them to the client. */
interface ControlScripts {
  dqRoutePause(...args: Arg[]): Promise<number>;
  dqRouteDrain(...args: Arg[]): Promise<number>;
  dqRouteDeadPurge(...args: Arg[]): Promise<number>;
  dqRouteLiveMachines(...args: Arg[]): Promise<number>;
}

/** Where a partition keeps the tasks of a listed state: its waiting list, in-flight hash or dead list. */
export type PartitionHolding = 'ready' | 'running' | 'dead';

/**
 * The route queue's operations commands, one partition per call (each partition is its own slot): pause,
 * per-partition lengths and pages for listings, and the bounded cleaning steps.
 */
export class RouteControlStore {
  readonly keys: RouteKeys;

  constructor(
    private readonly client: RedisClient,
    readonly route: RouteStore,
  ) {
    this.keys = route.keys;
  }

  private get scripts(): ControlScripts {
    return this.client as unknown as ControlScripts;
  }

  /** The partitions to act on: those Redis records, or the configured count before the first start. */
  async partitions(): Promise<number> {
    return Math.max(await this.route.partitionCount(), this.route.options.partitions);
  }

  /** Pauses or resumes one partition and tells its owner. */
  async setPaused(partition: number, paused: boolean): Promise<void> {
    await this.scripts.dqRoutePause(this.keys.partition(partition).own, paused ? 1 : 0, this.keys.events, partition);
  }

  /** Whether one partition is paused. */
  async isPaused(partition: number): Promise<boolean> {
    return (await this.client.hget(this.keys.partition(partition).own, 'paused')) === '1';
  }

  /** How many tasks each of the first `n` partitions holds in a state. */
  lengths(state: PartitionHolding, n: number): Promise<number[]> {
    return Promise.all(
      Array.from({ length: n }, (_, p) => {
        const k = this.keys.partition(p);
        return state === 'running' ? this.client.hlen(k.inflight) : this.client.llen(state === 'ready' ? k.list : k.dead);
      }),
    );
  }

  /**
   * Stored entries `start..stop` of a partition in a state: waiting items in list order, in-flight items in
   * seq order (the in-flight batch is small: at most `batchSize`), dead letters oldest first.
   */
  async range(state: PartitionHolding, partition: number, start: number, stop: number): Promise<string[]> {
    const k = this.keys.partition(partition);
    if (state !== 'running') return this.client.lrange(state === 'ready' ? k.list : k.dead, start, stop);
    const inflight = await this.client.hgetall(k.inflight);
    const bySeq = Object.entries(inflight).sort(([a], [b]) => Number(a) - Number(b));
    return bySeq.slice(start, stop + 1).map(([, item]) => item);
  }

  /** Removes up to `batch` waiting tasks of a partition; returns how many. */
  async drain(partition: number, batch: number): Promise<number> {
    return Number(await this.scripts.dqRouteDrain(this.keys.partition(partition).list, batch));
  }

  /** Deletes up to `batch` dead letters of a partition that died `ageMs` ago or earlier; returns how many. */
  async purgeDead(partition: number, ageMs: number, batch: number): Promise<number> {
    return Number(await this.scripts.dqRouteDeadPurge(this.keys.partition(partition).dead, ageMs, batch));
  }

  /** Machines whose last heartbeat is younger than the offline threshold. */
  async liveMachines(): Promise<number> {
    return Number(await this.scripts.dqRouteLiveMachines(this.keys.machines, this.route.options.offlineMs));
  }

  /**
   * Deletes a partition's tasks (waiting, in flight, dead) and event stream with UNLINK (freed in the
   * background), and its pause flag; its ownership record and sequence stay (order and fencing go on).
   */
  async obliterate(partition: number): Promise<void> {
    const k = this.keys.partition(partition);
    await this.client.unlink(k.list, k.inflight, k.dead, k.log);
    await this.setPaused(partition, false);
  }
}
