import { PartitionShrinkError } from '../errors';
import { newRequestId, REQUEST_TTL_MS, requestBucket } from '../runtime/request-id';
import {
  assignOutcome, fencedOutcome, pushOutcome, releaseOutcome, routeAckOutcome, ScriptOutcome, takeOutcome, type RouteAckOutcome,
  type AssignOutcome, type PushOutcome, type ReleaseOutcome, type TakeStatus,
} from '../redis/script-outcome';
import type { RouteStatus } from '../interfaces';
import type { RedisClient } from '../redis/script-loader';
import type { ResolvedRouteOptions } from '../options/resolve-options';
import { routeKeys, type RouteKeys } from './route-keys';

type Arg = string | number;
interface RouteScripts {
  dqRoutePush(...args: Arg[]): Promise<(string | number)[]>;
  dqRouteTake(...args: Arg[]): Promise<[number, number, ...string[]]>;
  dqRouteAck(...args: Arg[]): Promise<number>;
  dqRouteRenew(...args: Arg[]): Promise<[number, number | string, number | string, number?]>;
  dqRouteAssign(...args: Arg[]): Promise<number>;
  dqRouteRelease(...args: Arg[]): Promise<number>;
  dqRouteHeartbeat(...args: Arg[]): Promise<number[]>;
  dqRouteEvict(...args: Arg[]): Promise<[number, string[], string[]]>;
  dqRouteTopology(...args: Arg[]): Promise<[number, number, number?, string?]>;
  dqRoutePartitionInit(...args: Arg[]): Promise<number>;
  dqRouteProgress(...args: Arg[]): Promise<number>;
  dqRouteGateOpen(...args: Arg[]): Promise<number>;
  dqRouteLeave(...args: Arg[]): Promise<number>;
  dqRouteLock(...args: Arg[]): Promise<number>;
  dqRoutePlan(...args: Arg[]): Promise<number>;
  dqRouteDepart(...args: Arg[]): Promise<number>;
  dqRouteRedrive(...args: Arg[]): Promise<number>;
}

/** An item as stored: `<seq>:<at>:<json>` with json = { id, type, key, payload, tc? }. */
export interface RouteItem {
  seq: number;
  id: string;
  type: string;
  key: string;
  payload: unknown;
  /** When it entered its partition (ms, Redis clock: stamped by the push script): the task's dueAt. */
  at: number;
  /** The W3C traceparent it was submitted under (stored as `tc`, with the `tracing` option). */
  traceContext?: string;
}

/** What a partition did with one pushed task; `dropped` is the json of the task DiscardOldest dropped. */
export interface PushResult {
  outcome: PushOutcome;
  dropped?: string;
}

/** One partition as `getRouteStatus()` shows it. */
export type PartitionState = Omit<RouteStatus['partitions'][number], 'partition'>;

/**
 * Decodes a stored item `<seq>:<at>:<json>` (or `<seq>:<json>` with `at` in the json, as written before
 * the push script stamped the time); null when it is corrupt.
 */
export function decodeRouteItem(raw: string): RouteItem | null {
  const match = /^(\d+):(?:(\d+):)?/.exec(raw);
  if (!match) return null;
  try {
    const { id, type, key, payload, at, tc } = JSON.parse(raw.slice(match[0].length)) as Partial<Omit<RouteItem, 'seq'>> & { tc?: unknown };
    if (typeof id !== 'string' || typeof type !== 'string' || typeof key !== 'string') return null;
    const item: RouteItem = { seq: Number(match[1]), id, type, key, payload, at: match[2] !== undefined ? Number(match[2]) : Number(at ?? 0) };
    if (typeof tc === 'string') item.traceContext = tc;
    return item;
  } catch {
    return null;
  }
}

/**
 * What the history needs of an ordered task's last attempt, sent with its ack: its start (epoch ms) for a
 * first attempt that succeeded (the common case: a number keeps the argument small), else
 * `[start, attempt]`, or `[start, attempt, error name, error message]` when an earlier attempt failed
 * (the script then logs that retry before the completion), with the error's bounded stack fifth when it had one.
 */
export type AttemptRecord = number | [number, number] | [number, number, string, string] | [number, number, string, string, string];

/** The route queue's Redis access for one qId: the only code that sends route commands. */
export class RouteStore {
  readonly keys: RouteKeys;
  private readonly log: string;

  /** @param streamMaxLen entries kept in each partition's event stream; 0 writes no events. */
  constructor(
    private readonly client: RedisClient,
    prefix: string,
    readonly options: ResolvedRouteOptions,
    private readonly streamMaxLen = 0,
  ) {
    this.keys = routeKeys(prefix, options.qId);
    this.log = options.luaLog ? '1' : '0';
  }

  private get s(): RouteScripts {
    return this.client as unknown as RouteScripts;
  }

  /**
   * Appends encoded items to a partition (`n`: the partition count the producer used). `requestId` names
   * the call: a repeat (a re-send) returns the first reply and appends nothing. `entering`: delayed ordered
   * tasks entering their partition (their submit was logged for the history when they were delayed).
   * `requestTtlMs`: how long the reply is kept for a repeat (a move names its call after its task: see
   * `MoveCall`).
   */
  async push(partition: number, n: number, items: string[], requestId = newRequestId(), entering = false, requestTtlMs = REQUEST_TTL_MS): Promise<PushResult[] | 'stale-count'> {
    const k = this.keys.partition(partition);
    const { maxPartitionSize, rejectStrategy } = this.options;
    const flat = await this.s.dqRoutePush(
      k.list, k.own, k.requests(requestBucket(requestId)), k.log, k.recorded,
      n, maxPartitionSize, rejectStrategy, this.keys.events, partition, this.log, requestTtlMs, this.streamMaxLen, entering ? '1' : '0', requestId, ...items,
    );
    if (Number(flat[0]) === ScriptOutcome.StaleCount) return 'stale-count';
    // NOTE: under Exception the reply ends at the first full point: the tasks after it were not written.
    return items.map((_, i): PushResult => {
      if (2 * i >= flat.length) return { outcome: 'rejected' };
      const dropped = String(flat[2 * i + 1]);
      return dropped ? { outcome: pushOutcome(flat[2 * i]), dropped } : { outcome: pushOutcome(flat[2 * i]) };
    });
  }

  /** Takes the partition's next batch (the batch left in flight first) for its owner (machine, epoch). */
  async take(partition: number, me: string, epoch: number, maxReplays: number): Promise<{ status: TakeStatus; replays: number; items: string[] }> {
    const k = this.keys.partition(partition);
    const [code, replays, ...items] = await this.s.dqRouteTake(k.list, k.own, k.inflight, k.dead, me, epoch, this.options.batchSize, maxReplays, this.log);
    return { status: takeOutcome(code), replays: Number(replays), items };
  }

  /**
   * Acks seqs and buries failed ones: 'fenced' when not the owner any more (nothing changed), 'partial' when
   * some of them were not in flight (the take that handed them out was lost in a failover, or an earlier
   * call acked them: those still waiting run again). `starts` (seq -> what the history needs of the last
   * attempt, see AttemptRecord) goes into the history's entries.
   */
  async ack(partition: number, me: string, epoch: number, acked: number[], dead: [number, string][], starts: Map<number, AttemptRecord> = new Map()): Promise<RouteAckOutcome> {
    const k = this.keys.partition(partition);
    // NOTE: only the history reads the starts (through the stream): nothing to send with the streams off.
    const startsJson = starts.size > 0 && this.streamMaxLen > 0 ? JSON.stringify(Object.fromEntries(starts)) : '';
    const args: Arg[] = [k.own, k.inflight, k.dead, k.log, k.followed, k.recorded, me, epoch, this.options.maxDeadLetters, this.streamMaxLen, startsJson];
    args.push(acked.length, ...acked);
    for (const [seq, error] of dead) args.push(seq, error);
    return routeAckOutcome(await this.s.dqRouteAck(...args));
  }

  /**
   * Extends this machine's lease of a partition; `claim` (a runner starts) also takes a new epoch, once per
   * call. `paused`: the route queue is paused (the heartbeat's safety net behind the `h:<p>` message).
   */
  async renew(partition: number, me: string, claim: boolean): Promise<{ owned: boolean; epoch: number; state: string; owner: string; paused: boolean }> {
    const k = this.keys.partition(partition);
    const [code, a, b, paused] = await this.s.dqRouteRenew(k.own, me, this.options.idleMs, claim ? newRequestId() : '');
    return fencedOutcome(code) === 'ok'
      ? { owned: true, epoch: Number(a), state: String(b), owner: me, paused: Number(paused) === 1 }
      : { owned: false, epoch: Number(b), state: '', owner: String(a), paused: false };
  }

  /** Moves a partition towards `desired`: at once when free or its owner is gone, else by asking the owner to hand over. */
  async assign(partition: number, desired: string, ownerAlive: boolean): Promise<AssignOutcome> {
    const k = this.keys.partition(partition);
    return assignOutcome(await this.s.dqRouteAssign(k.own, desired, ownerAlive ? 1 : 0, this.options.idleMs, this.keys.events, partition, this.log));
  }

  /**
   * Hands a revoking partition over to its next owner ('released'); 'lost' when not ours any more, 'active'
   * when the scheduler called the hand-over off (the partition stays ours).
   */
  async release(partition: number, me: string, epoch: number): Promise<ReleaseOutcome> {
    const k = this.keys.partition(partition);
    return releaseOutcome(await this.s.dqRouteRelease(k.own, me, epoch, this.options.idleMs, this.keys.events, partition));
  }

  /** Records this machine as alive; returns the partitions the plan gives it. */
  async heartbeat(me: string): Promise<number[]> {
    const [, ...partitions] = await this.s.dqRouteHeartbeat(this.keys.machines, this.keys.assign, me);
    return partitions.map(Number);
  }

  /** Evicts silent machines; returns live machines and the current plan. */
  async evict(): Promise<{ live: string[]; plan: Map<number, string> }> {
    const [, live, flat] = await this.s.dqRouteEvict(this.keys.machines, this.keys.assign, this.options.offlineMs, this.log);
    const plan = new Map<number, string>();
    for (let i = 0; i < flat.length; i += 2) plan.set(Number(flat[i]), flat[i + 1]);
    return { live, plan };
  }

  /** Takes the scheduler lock (or renews it when held); true when this machine holds it. */
  async lock(me: string, ttlMs: number): Promise<boolean> {
    return fencedOutcome(await this.s.dqRouteLock(this.keys.lock, me, ttlMs)) === 'ok';
  }

  /** Writes the scheduler's plan (undefined: unassigned) while `me` holds the lock; false when it does not. */
  async savePlan(me: string, plan: (string | undefined)[]): Promise<boolean> {
    const fields = plan.flatMap((m, p) => (m ? [p, m] : []));
    return fencedOutcome(await this.s.dqRoutePlan(this.keys.assign, this.keys.lock, me, ...fields)) === 'ok';
  }

  /** The current owner of each of the first `n` partitions (undefined when none). */
  owners(n: number): Promise<(string | undefined)[]> {
    return Promise.all(Array.from({ length: n }, async (_, p) => (await this.client.hget(this.keys.partition(p).own, 'owner')) || undefined));
  }

  /** A leaving machine: deregisters, releases the scheduler lock if it holds it, asks the others to rebalance. */
  async depart(me: string): Promise<void> {
    await this.s.dqRouteDepart(this.keys.machines, this.keys.lock, me, this.keys.events);
  }

  /**
   * Records the partition count; returns the count before the latest growth (0: none).
   * @throws PartitionShrinkError when Redis holds more partitions
   */
  async topology(partitions: number): Promise<number> {
    const [code, a, previous, tags] = await this.s.dqRouteTopology(this.keys.meta, partitions);
    if (Number(code) === ScriptOutcome.ShrinkRefused) throw new PartitionShrinkError(this.options.qId, Number(a), partitions);
    this.keys.useTags(tags);
    return Number(previous);
  }

  /** Sets a partition's count; returns its barrier (-1 = none). `grown`: the queue grew from a smaller count. */
  initPartition(partition: number, n: number, grown: boolean): Promise<number> {
    return this.s.dqRoutePartitionInit(this.keys.partition(partition).own, n, grown ? 1 : 0);
  }

  /** The resize barriers of every partition (null: no resize). */
  async barriers(): Promise<number[] | null> {
    const raw = await this.client.hget(this.keys.meta, 'barriers');
    return raw ? (JSON.parse(raw) as number[]) : null;
  }

  /** Records the resize barriers of every partition. */
  async saveBarriers(barriers: number[]): Promise<void> {
    await this.client.hset(this.keys.meta, 'barriers', JSON.stringify(barriers));
  }

  /** Gives a partition up on shutdown. */
  async leave(partition: number, me: string, epoch: number): Promise<boolean> {
    return fencedOutcome(await this.s.dqRouteLeave(this.keys.partition(partition).own, me, epoch, this.keys.events, partition)) === 'ok';
  }

  /** The partition count recorded in Redis (0 before the first start). */
  async partitionCount(): Promise<number> {
    const [count, tags] = await this.client.hmget(this.keys.meta, 'partitions', 'tags');
    // NOTE: a queue Redis does not hold yet will get spread tags: only an existing one says how it names them.
    if (count) this.keys.useTags(tags);
    return Number(count ?? 0);
  }

  /** Smallest seq still waiting or in flight in a partition (-1: drained). */
  progress(partition: number): Promise<number> {
    const k = this.keys.partition(partition);
    return this.s.dqRouteProgress(k.list, k.inflight).then(Number);
  }

  /** Opens a partition's resize gate. */
  openGate(partition: number): Promise<number> {
    return this.s.dqRouteGateOpen(this.keys.partition(partition).own);
  }

  /** A partition's owner, epoch, state and counts. */
  async partitionState(partition: number): Promise<PartitionState> {
    const k = this.keys.partition(partition);
    const [own, waiting, inFlight, dead] = await Promise.all([
      this.client.hgetall(k.own), this.client.llen(k.list), this.client.hlen(k.inflight), this.client.llen(k.dead),
    ]);
    return { owner: own.owner || null, epoch: Number(own.epoch ?? 0), state: own.state ?? 'active', waiting, inFlight, dead };
  }

  /** Registered machines with their last heartbeat (ms, Redis clock). */
  /** The machine holding the scheduler lock, or null. */
  async lockHolder(): Promise<string | null> {
    return this.client.get(this.keys.lock);
  }

  async machines(): Promise<{ id: string; lastHeartbeat: number }[]> {
    const flat = await this.client.zrange(this.keys.machines, 0, '-1', 'WITHSCORES');
    const machines = [];
    for (let i = 0; i < flat.length; i += 2) machines.push({ id: flat[i], lastHeartbeat: Number(flat[i + 1]) });
    return machines;
  }

  /** The oldest `limit` dead letters of a partition (JSON: item, diedAt, error). */
  deadLetters(partition: number, limit: number): Promise<string[]> {
    return this.client.lrange(this.keys.partition(partition).dead, 0, limit - 1);
  }

  /**
   * Moves the oldest `limit` dead letters of a partition back to the tail of its list, in one script;
   * returns how many. `requestId` makes a repeated call (a re-send) harmless.
   */
  redriveDead(partition: number, limit: number, requestId = newRequestId()): Promise<number> {
    const k = this.keys.partition(partition);
    const { maxPartitionSize } = this.options;
    return this.s
      .dqRouteRedrive(k.dead, k.list, k.own, k.requests(requestBucket(requestId)), limit, maxPartitionSize, this.keys.events, partition, REQUEST_TTL_MS, requestId)
      .then(Number);
  }
}
