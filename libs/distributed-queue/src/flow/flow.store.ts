import type { FlowFailurePolicy } from '../interfaces';
import { delayQueueKeys } from '../redis/queue-keys';
import type { RedisClient } from '../redis/script-loader';
import { flowIndexKey, flowKeys } from './flow-keys';

type Arg = string | number;
/** Dependencies read per context call (a node may have 10,000). */
const CONTEXT_PAGE = 250;
interface FlowScripts {
  dqFlowDefine(...args: Arg[]): Promise<[number, string, ...number[]]>;
  dqFlowSettle(...args: Arg[]): Promise<[string, ...[number, number, string[], string, string[]][]]>;
  dqFlowBlock(...args: Arg[]): Promise<[string, string[], string[]]>;
  dqFlowContext(...args: Arg[]): Promise<[number, ...string[]]>;
  dqFlowCancel(...args: Arg[]): Promise<string[]>;
  dqFlowPage(...args: Arg[]): Promise<[string, string[], ...string[]] | []>;
  dqDelayFlowPark(...args: Arg[]): Promise<number[]>;
  dqDelayFlowRelease(...args: Arg[]): Promise<string[]>;
  dqDelayFlowUnpark(...args: Arg[]): Promise<number[]>;
}

/** A node as the flow's record keeps it (see `scripts/includes/flow-record.lua`). */
export interface FlowDef {
  /** Its task type. */
  t: string;
  /** The delay-queue type its task is parked in or submitted to (an ordered node's: the route's delay type). */
  pt: string;
  /** Its dependencies' refs (kept apart from the def's JSON in the record, see flow-record.lua). */
  d: string[];
  /** Its dependents: ref, park type, ref, park type, ... (kept apart too; not read back by `page`). */
  n: string[];
  f: FlowFailurePolicy;
  /** Its place in the nodes given to submitFlow (getFlow lists them in that order). */
  i?: number;
  k?: string;
  dl?: number;
  p?: number;
  g?: string;
}

/** What `settle` answers for one node. */
export interface SettleReply {
  /** false: a repeat (nothing changed); null: the flow or node is gone. */
  changed: boolean | null;
  /** The cascade to carry on (see `block`): its direction, and where to go on. */
  delta: number;
  next: CascadeStep[];
  /** Dependents to tell (a completion, or a death under 'ignore'): ref, park type pairs. */
  tell: string[];
}

/** A step of a cascade: a ref, and the index (1-based) of its first dependent not visited yet. */
export type CascadeStep = [string, number];

function resumePairs(flat: string[]): CascadeStep[] {
  const out: CascadeStep[] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i], Number(flat[i + 1])]);
  return out;
}

/** Refs as the flow's record keeps a node's dependencies: one per line. */
export function lines(refs: string[]): string {
  return refs.length === 0 ? '' : `${refs.join('\n')}\n`;
}

/** Dependents (ref, park type pairs) as the flow's record keeps them: `<ref>\t<type>` per line. */
export function dependentLines(pairs: string[]): string {
  let out = '';
  for (let i = 0; i < pairs.length; i += 2) out += `${pairs[i]}\t${pairs[i + 1]}\n`;
  return out;
}

/** A def read back: its JSON and its dependencies' lines (its dependents are not read back). */
export function parseDef(json: string, deps: string): FlowDef {
  return { ...(JSON.parse(json) as Omit<FlowDef, 'd' | 'n'>), d: deps.split('\n').filter(Boolean), n: [] };
}

/** A parked node (see `scripts/includes/flow-park.lua`). */
export interface ParkedNode {
  id: string;
  delay: number;
  priority?: number;
  group?: string;
  deps: string[];
  payload: string;
}

/** Thin typed layer over the flow scripts: the flow's record, and the parked nodes in their types. */
export class FlowStore {
  constructor(
    private readonly client: RedisClient,
    readonly prefix: string,
    private readonly streamMaxLen: number,
    readonly retentionMs: number,
  ) {}

  private get scripts(): FlowScripts {
    return this.client as unknown as FlowScripts;
  }

  private keys(flowId: string): string[] {
    return flowKeys(this.prefix, flowId);
  }

  /**
   * Writes a batch of a flow's nodes (the last one makes it 'running'): whether the flow was created now,
   * its end state now ('' but for a repeat that finds every node settled), and which nodes are settled.
   */
  async define(flowId: string, total: number, last: boolean, nodes: { ref: string; def: FlowDef }[]): Promise<{ created: boolean; ended: string; settled: boolean[] }> {
    const args = nodes.flatMap(({ ref, def: { d, n, ...def } }) => [ref, JSON.stringify(def), lines(d), dependentLines(n)]);
    const [created, ended, ...settled] = await this.scripts.dqFlowDefine(...this.keys(flowId), flowId, total, Date.now(), last ? '1' : '0', this.retentionMs, ...args);
    return { created: created === 1, ended: String(ended), settled: settled.map((s) => Number(s) === 1) };
  }

  /** Settles nodes of one flow in one call (see settle-7.lua): the flow's end state now or '', and each node's reply. */
  async settle(flowId: string, nodes: { ref: string; outcome: 'c' | 'x'; json: string }[]): Promise<{ ended: string; replies: SettleReply[] }> {
    const [ended, ...replies] = await this.scripts.dqFlowSettle(
      ...this.keys(flowId), Date.now(), this.retentionMs, ...nodes.flatMap((n) => [n.ref, n.outcome, n.json]),
    );
    return {
      ended,
      replies: replies.map(([changed, delta, next, tell, rest]) => ({
        changed: changed === -1 ? null : changed === 1,
        delta: Number(delta),
        tell: tell.split('\n').filter(Boolean).flatMap((line) => line.split('\t')),
        next: [...resumePairs(rest), ...next.map((r): CascadeStep => [r, 1])],
      })),
    };
  }

  /** One call of a cascade: `steps` (ref, its first dependent to visit), at most `budget` dependents visited. */
  async block(flowId: string, delta: number, steps: CascadeStep[], budget: number): Promise<{ ended: string; next: CascadeStep[] }> {
    const [ended, next, rest] = await this.scripts.dqFlowBlock(...this.keys(flowId), delta, Date.now(), this.retentionMs, budget, ...steps.flat());
    return { ended, next: [...resumePairs(rest), ...next.map((r): CascadeStep => [r, 1])] };
  }

  /** A node's dependencies: ref, state ('c', 'x' or ''), result or error JSON. */
  async context(flowId: string, ref: string): Promise<[string, string, string][]> {
    const out: [string, string, string][] = [];
    for (let from = 1; from > 0; ) {
      const [next, ...flat] = await this.scripts.dqFlowContext(...this.keys(flowId), ref, from, CONTEXT_PAGE);
      from = Number(next);
      for (let i = 0; i < flat.length; i += 3) out.push([flat[i], flat[i + 1], flat[i + 2]]);
    }
    return out;
  }

  /** One page of cancelFlow; null when the flow does not exist. */
  async cancelPage(flowId: string, cursor: string, count: number): Promise<{ cursor: string; ended: string; nodes: [string, FlowDef][] } | null> {
    const reply = await this.scripts.dqFlowCancel(...this.keys(flowId), cursor, count, Date.now(), this.retentionMs);
    if (reply.length === 0) return null;
    const nodes: [string, FlowDef][] = [];
    for (let i = 2; i < reply.length; i += 3) nodes.push([reply[i], parseDef(reply[i + 1], reply[i + 2])]);
    return { cursor: reply[0], ended: reply[1], nodes };
  }

  /** One page of getFlow; null when the flow does not exist. */
  async page(flowId: string, cursor: string, count: number): Promise<{
    cursor: string; meta: Record<string, string>; nodes: { ref: string; def: FlowDef; state: string; blocking: number; json: string }[];
  } | null> {
    const reply = await this.scripts.dqFlowPage(...this.keys(flowId), cursor, count);
    if (reply.length === 0) return null;
    const [next, flatMeta, ...rest] = reply as [string, string[], ...string[]];
    const meta: Record<string, string> = {};
    for (let i = 0; i < flatMeta.length; i += 2) meta[flatMeta[i]] = flatMeta[i + 1];
    const nodes = [];
    for (let i = 0; i < rest.length; i += 6) {
      nodes.push({ ref: rest[i], def: parseDef(rest[i + 1], rest[i + 2]), state: rest[i + 3], blocking: Number(rest[i + 4]), json: rest[i + 5] });
    }
    return { cursor: next, meta, nodes };
  }

  /** Parks nodes of one delay-queue type; per node whether it was parked now (false: its id existed). */
  async park(type: string, nodes: ParkedNode[]): Promise<boolean[]> {
    const k = delayQueueKeys(this.prefix, type);
    const args = nodes.flatMap((n) => [n.id, Math.floor(n.delay), n.priority ?? '', n.group ?? '', JSON.stringify(n.deps), n.payload]);
    return (await this.scripts.dqDelayFlowPark(k.waiting, k.jobs, k.seq, k.limits, ...args)).map((x) => Number(x) === 1);
  }

  /**
   * Tells parked nodes of one type that a dependency completed (node id, dependency ref, '1' when it left a
   * result or an error to read, else '0'); the released ids.
   */
  release(type: string, pairs: [string, string, '0' | '1'][]): Promise<string[]> {
    const k = delayQueueKeys(this.prefix, type);
    return this.scripts.dqDelayFlowRelease(k.waiting, k.jobs, k.limits, k.log, k.recorded, k.events, this.streamMaxLen, ...pairs.flat());
  }

  /** Removes parked nodes of one type (a cancel); per node whether it was parked. */
  async unpark(type: string, nodes: { id: string; deps: string[] }[]): Promise<boolean[]> {
    const k = delayQueueKeys(this.prefix, type);
    return (await this.scripts.dqDelayFlowUnpark(k.waiting, k.jobs, ...nodes.flatMap((n) => [n.id, JSON.stringify(n.deps)]))).map((x) => Number(x) === 1);
  }

  /** The flow's meta (see flow-record.lua); null when it does not exist. */
  async meta(flowId: string): Promise<Record<string, string> | null> {
    const meta = await this.client.hgetall(this.keys(flowId)[0]);
    return Object.keys(meta).length === 0 ? null : meta;
  }

  /** Flow nodes of `type` buried and not swept yet (ZSET `<dead>:f`, see bury.lua), a page: id, time of death, last error JSON. */
  async deadNodes(type: string, count: number): Promise<[string, number, string | null][]> {
    const k = delayQueueKeys(this.prefix, type);
    const flat = await this.client.zrange(`${k.dead}:f`, 0, count - 1, 'WITHSCORES');
    const nodes: [string, number, string | null][] = [];
    for (let i = 0; i < flat.length; i += 2) nodes.push([flat[i], Number(flat[i + 1]), null]);
    if (nodes.length > 0) {
      const errors = await this.client.hmget(k.errors, ...nodes.map(([id]) => id));
      nodes.forEach((node, i) => (node[2] = errors[i]));
    }
    return nodes;
  }

  /** Removes swept nodes from `<dead>:f` (a node buried again since keeps its newer entry: same member, so gone too; its sweep is a repeat). */
  async swept(type: string, ids: string[]): Promise<void> {
    if (ids.length > 0) await this.client.zrem(`${delayQueueKeys(this.prefix, type).dead}:f`, ...ids);
  }

  /** Records a new flow in the index (the dashboard's list). */
  async indexed(flowId: string, createdAt: number): Promise<void> {
    await this.client.zadd(flowIndexKey(this.prefix), createdAt, flowId);
  }

  /** The newest flows of the index, newest first: ids only (expired ones are pruned by the caller). */
  async newest(offset: number, limit: number): Promise<string[]> {
    return this.client.zrevrange(flowIndexKey(this.prefix), offset, offset + limit - 1);
  }

  /** Removes ids from the index (flows that expired). */
  async unindex(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.client.zrem(flowIndexKey(this.prefix), ...ids);
  }
}
