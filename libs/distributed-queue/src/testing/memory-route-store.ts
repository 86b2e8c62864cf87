import type { ResolvedRouteOptions } from '../options/resolve-options';
import { noRedis } from '../redis/no-redis';
import { RouteControlStore, type PartitionHolding } from '../route/route-control.store';
import { decodeRouteItem, RouteStore, type PartitionState, type PushResult, type RouteItem } from '../route/route.store';
import type { TestClock } from './test-clock';

/** An ordered task in its partition: its stored text (`<seq>:<at>:<json>`), decoded, and its retry time. */
export interface MemoryItem {
  raw: string;
  item: RouteItem;
  /** Failed attempts so far (the next runs after `retryAt`). */
  failures: number;
  retryAt?: number;
  lastError?: Error;
}

/** One partition: its waiting items in order, those running (by seq), its dead letters (JSON), its pause. */
export interface MemoryPartition {
  list: MemoryItem[];
  running: Map<number, MemoryItem>;
  dead: string[];
  paused: boolean;
}

/**
 * The route queue of the testing module, as the route scripts keep it: partitions of items in submission
 * order (a key always maps to one partition, as `partitionOf` says), capped at `maxPartitionSize` with the
 * queue's `rejectStrategy`, dead letters per partition, one owner (this process) for every partition. The
 * real `RouteProducer` pushes here, so `submitOrdered` and its results are the real ones; the ordered
 * runner takes the items.
 */
export class MemoryRouteStore extends RouteStore {
  readonly partitions: MemoryPartition[];
  private seq = 0;
  private readonly replies = new Map<string, PushResult[]>();

  constructor(
    options: ResolvedRouteOptions,
    readonly clock: TestClock,
    private readonly pushed: () => void,
    private readonly recorded: (item: RouteItem) => void = () => undefined,
  ) {
    super(noRedis(), 'memory', options);
    this.partitions = Array.from({ length: options.partitions }, () => ({ list: [], running: new Map(), dead: [], paused: false }));
  }

  override async partitionCount(): Promise<number> {
    return this.partitions.length;
  }

  override async push(partition: number, _n: number, items: string[], requestId?: string, entering?: boolean): Promise<PushResult[] | 'stale-count'> {
    // NOTE: a move repeated under its request id appends nothing twice (see MoveCall)
    const repeated = entering && requestId ? this.replies.get(requestId) : undefined;
    if (repeated) return repeated;
    const p = this.partitions[partition];
    const { maxPartitionSize, rejectStrategy } = this.options;
    const results: PushResult[] = [];
    for (const json of items) {
      if (p.list.length >= maxPartitionSize) {
        if (rejectStrategy === 'Exception') break;
        if (rejectStrategy === 'Discard' || p.list.length === 0) {
          results.push({ outcome: 'discarded' });
          continue;
        }
        const dropped = p.list.shift()!;
        this.append(p, json, !entering);
        results.push({ outcome: 'dropped-oldest', dropped: dropped.raw.slice(dropped.raw.indexOf(':', dropped.raw.indexOf(':') + 1) + 1) });
        continue;
      }
      this.append(p, json, !entering);
      results.push({ outcome: 'queued' });
    }
    const replies = items.map((_, i): PushResult => results[i] ?? { outcome: 'rejected' });
    // NOTE: as push-5.lua: a call that appended nothing keeps no reply (a refused move is tried again)
    if (entering && requestId && replies.some((r) => r.outcome === 'queued' || r.outcome === 'dropped-oldest')) this.replies.set(requestId, replies);
    this.pushed();
    return replies;
  }

  /** Appends a task; `submitted`: a submit (not a delayed task entering), recorded for `getSubmitted`. */
  private append(p: MemoryPartition, json: string, submitted: boolean): void {
    const raw = `${++this.seq}:${this.clock.now()}:${json}`;
    const item = decodeRouteItem(raw)!;
    p.list.push({ raw, item, failures: 0 });
    if (submitted) this.recorded(item);
  }

  /** Forgets every partition's tasks, dead letters and pause (`TestQueue.reset`). */
  clear(): void {
    for (const p of this.partitions) Object.assign(p, { list: [], running: new Map(), dead: [], paused: false });
    this.replies.clear();
  }

  override async partitionState(partition: number): Promise<PartitionState> {
    const p = this.partitions[partition];
    return { owner: 'memory', epoch: 1, state: 'active', waiting: p.list.length, inFlight: p.running.size, dead: p.dead.length };
  }

  override async machines(): Promise<{ id: string; lastHeartbeat: number }[]> {
    return [{ id: 'memory', lastHeartbeat: this.clock.now() }];
  }

  override async lockHolder(): Promise<string | null> {
    return 'memory';
  }

  override async deadLetters(partition: number, limit: number): Promise<string[]> {
    return this.partitions[partition].dead.slice(0, limit);
  }

  override async redriveDead(partition: number, limit: number): Promise<number> {
    const p = this.partitions[partition];
    const letters = p.dead.splice(0, limit);
    let count = 0;
    for (const letter of letters) {
      const { item } = JSON.parse(letter) as { item?: string };
      const task = typeof item === 'string' ? decodeRouteItem(item) : null;
      if (!task) continue;
      p.list.push({ raw: item!, item: task, failures: 0 });
      count++;
    }
    if (count > 0) this.pushed();
    return count;
  }

  /** Tells the runner that items may be runnable (a push, a resume, a re-drive). */
  notify(): void {
    this.pushed();
  }

  /** Buries an item: a dead letter as the ack script writes it ({ item, diedAt, error }). */
  bury(partition: number, entry: MemoryItem, error: { name: string; message: string; attempts: number; stack?: string }): void {
    this.partitions[partition].dead.push(JSON.stringify({ item: entry.raw, diedAt: this.clock.now(), error }));
    const max = this.options.maxDeadLetters;
    const dead = this.partitions[partition].dead;
    if (max > 0 && dead.length > max) dead.splice(0, dead.length - max);
  }
}

/** The route queue's operations (pause, listings, cleaning) on the in-memory partitions. */
export class MemoryRouteControl extends RouteControlStore {
  constructor(private readonly memory: MemoryRouteStore) {
    super(noRedis(), memory);
  }

  override async partitions(): Promise<number> {
    return this.memory.partitions.length;
  }

  override async setPaused(partition: number, paused: boolean): Promise<void> {
    this.memory.partitions[partition].paused = paused;
    if (!paused) this.memory.notify();
  }

  override async isPaused(partition: number): Promise<boolean> {
    return this.memory.partitions[partition].paused;
  }

  override async lengths(state: PartitionHolding, n: number): Promise<number[]> {
    return this.memory.partitions.slice(0, n).map((p) => (state === 'ready' ? p.list.length : state === 'running' ? p.running.size : p.dead.length));
  }

  override async range(state: PartitionHolding, partition: number, start: number, stop: number): Promise<string[]> {
    const p = this.memory.partitions[partition];
    const all = state === 'ready' ? p.list.map((i) => i.raw) : state === 'running' ? [...p.running.entries()].sort(([a], [b]) => a - b).map(([, i]) => i.raw) : p.dead;
    return all.slice(start, stop + 1);
  }

  override async drain(partition: number, batch: number): Promise<number> {
    return this.memory.partitions[partition].list.splice(0, batch).length;
  }

  override async purgeDead(partition: number, ageMs: number, batch: number): Promise<number> {
    const p = this.memory.partitions[partition];
    const before = this.memory.clock.now() - ageMs;
    let removed = 0;
    p.dead = p.dead.filter((letter) => {
      if (removed >= batch || Number((JSON.parse(letter) as { diedAt?: number }).diedAt ?? 0) > before) return true;
      removed++;
      return false;
    });
    return removed;
  }

  override async liveMachines(): Promise<number> {
    return 1;
  }

  override async obliterate(partition: number): Promise<void> {
    const p = this.memory.partitions[partition];
    p.list.length = 0;
    p.running.clear();
    p.dead.length = 0;
    p.paused = false;
  }
}
