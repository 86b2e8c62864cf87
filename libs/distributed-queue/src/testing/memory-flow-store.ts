import { dependentLines, FlowStore, lines, parseDef, type CascadeStep, type FlowDef, type ParkedNode, type SettleReply } from '../flow/flow.store';
import { noRedis } from '../redis/no-redis';
import type { MemoryEngine } from './memory-engine';
import { isNodeField, linesFrom, num, rangeOf, resumePairs, wholeMs } from './memory-flow-text';
import { MemoryParkedNodes } from './memory-flow-parking';
import { expireFlow, freshFlow, incrMeta, nodeJson, scanNodes, setDef, type MemoryFlow } from './memory-flow-record';

/** A reply of settleOne as the script returns it: changed, delta, next refs, tell lines, resume pairs. */
type RawSettle = [number, number, string[], string, (string | number)[]];

/**
 * The flows of the testing module, as the flow scripts keep them (define-7, settle-7, block-7, context-7,
 * cancel-7, page-7 and flow-record.lua); the parked nodes and buried ones are `MemoryParkedNodes`'. Every
 * answer has the shape and the text encodings the real `FlowStore` gives, so `FlowProgress`,
 * `TaskFlowService` and `readFlow` run unchanged. An ended flow expires `retentionMs` after its end on the
 * engine's clock; the flows' index is the dashboard's list.
 */
export class MemoryFlowStore extends FlowStore {
  private readonly flows = new Map<string, MemoryFlow>();
  private readonly nodes: MemoryParkedNodes;
  /** The flows' index (ZSET flow id -> created). */
  private readonly index = new Map<string, number>();

  constructor(
    private readonly engine: MemoryEngine,
    retentionMs: number,
  ) {
    super(noRedis(), 'memory', 0, retentionMs);
    this.nodes = new MemoryParkedNodes(engine);
  }

  // ---- the flow's record -------------------------------------------------------------------------------

  override async define(flowId: string, total: number, last: boolean, nodes: { ref: string; def: FlowDef }[]): Promise<{ created: boolean; ended: string; settled: boolean[] }> {
    const now = this.engine.clock.now();
    let flow = this.live(flowId);
    let state = flow?.meta.state;
    let created = false;
    const settled: boolean[] = [];
    if (!flow || state === undefined) {
      created = true;
      state = 'creating';
      // NOTE: a new flow: what a flow of the same id left goes first (define-7.lua DELs the other hashes)
      flow = freshFlow();
      flow.meta = { state, id: flowId, total: String(total), created: String(now), done: '0', dead: '0', deadFail: '0', cancelled: '0', blocked: '0' };
      this.flows.set(flowId, flow);
      for (const { ref, def: { d, n, ...def } } of nodes) {
        setDef(flow, ref, JSON.stringify(def), false);
        if (d.length > 0) setDef(flow, `\r${ref}`, lines(d), false);
        if (n.length > 0) setDef(flow, `\n${ref}`, dependentLines(n), false);
        settled.push(false);
      }
    } else {
      for (const { ref, def: { d, n, ...def } } of nodes) {
        if (state === 'creating') {
          setDef(flow, ref, JSON.stringify(def), true);
          if (d.length > 0) setDef(flow, `\r${ref}`, lines(d), true);
          if (n.length > 0) setDef(flow, `\n${ref}`, dependentLines(n), true);
          settled.push(flow.st.has(ref));
        } else if (!flow.defs.has(ref)) {
          settled.push(true); // a node the flow does not have: a repeat writes nothing new
        } else {
          settled.push(flow.st.has(ref));
        }
      }
    }
    let ended = '';
    if (last && state === 'creating') {
      flow.meta.state = 'running';
      ended = this.flowEnd(flow, now);
    }
    return { created, ended, settled };
  }

  override async settle(flowId: string, nodes: { ref: string; outcome: 'c' | 'x'; json: string }[]): Promise<{ ended: string; replies: SettleReply[] }> {
    const flow = this.live(flowId) ?? freshFlow();
    // NOTE: a call visits at most 200 dependents in all (settle-7.lua), the rest go back as resume pairs
    const budget = { left: 200 };
    let anyChange = false;
    const raw = nodes.map(({ ref, outcome, json }) => {
      const reply = this.settleOne(flow, ref, outcome, json, budget);
      if (reply[0] === 1) anyChange = true;
      return reply;
    });
    const ended = anyChange ? this.flowEnd(flow, this.engine.clock.now()) : '';
    return {
      ended,
      replies: raw.map(([changed, delta, next, tell, rest]) => ({
        changed: changed === -1 ? null : changed === 1,
        delta,
        tell: tell.split('\n').filter(Boolean).flatMap((line) => line.split('\t')),
        next: [...resumePairs(rest), ...next.map((r): CascadeStep => [r, 1])],
      })),
    };
  }

  override async block(flowId: string, delta: number, steps: CascadeStep[], budget: number): Promise<{ ended: string; next: CascadeStep[] }> {
    const flow = this.live(flowId) ?? freshFlow();
    const walk = delta === 2;
    const d = walk ? 1 : delta;
    let left = budget;
    const next: string[] = [];
    const rest: (string | number)[] = [];
    for (const [ref, from] of steps) {
      if (left > 0) left = this.cascadeFrom(flow, ref, Number(from), d, walk, left, next, rest);
      else rest.push(ref, from);
    }
    const ended = this.flowEnd(flow, this.engine.clock.now());
    return { ended, next: [...resumePairs(rest), ...next.map((r): CascadeStep => [r, 1])] };
  }

  override async context(flowId: string, ref: string): Promise<[string, string, string][]> {
    const flow = this.live(flowId);
    if (!flow) return [];
    // NOTE: the real store reads 250 a call; one call here (nothing runs between the pages in memory)
    const [deps] = linesFrom(flow.defs.get(`\r${ref}`), 1, Infinity);
    return deps.map((dep): [string, string, string] => {
      const s = flow.st.get(dep) ?? '';
      return [dep, s, nodeJson(flow, dep, s)];
    });
  }

  override async cancelPage(flowId: string, cursor: string, count: number): Promise<{ cursor: string; ended: string; nodes: [string, FlowDef][] } | null> {
    const flow = this.live(flowId);
    if (!flow) return null;
    const { next, refs } = scanNodes(flow, cursor, count);
    const nodes: [string, FlowDef][] = [];
    let cancelled = 0;
    let unblocked = 0;
    for (const ref of refs) {
      if (flow.st.has(ref)) continue;
      flow.st.set(ref, 'k');
      cancelled++;
      if (this.blockingOf(flow, ref) > 0) unblocked++;
      nodes.push([ref, parseDef(flow.defs.get(ref)!, flow.defs.get(`\r${ref}`) ?? '')]);
    }
    // NOTE: a flow with nothing left to cancel (it completed) keeps its state (cancel-7.lua)
    if (cancelled > 0) {
      incrMeta(flow, 'cancelled', cancelled);
      flow.meta.cancel = '1';
    }
    if (unblocked > 0) incrMeta(flow, 'blocked', -unblocked);
    return { cursor: next, ended: this.flowEnd(flow, this.engine.clock.now()), nodes };
  }

  override async page(flowId: string, cursor: string, count: number): Promise<{
    cursor: string; meta: Record<string, string>; nodes: { ref: string; def: FlowDef; state: string; blocking: number; json: string }[];
  } | null> {
    const flow = this.live(flowId);
    if (!flow) return null;
    const meta = cursor === '0' ? { ...flow.meta } : {};
    const { next, refs } = scanNodes(flow, cursor, count);
    const nodes = refs.map((ref) => {
      const state = flow.st.get(ref) ?? '';
      return {
        ref,
        def: parseDef(flow.defs.get(ref)!, flow.defs.get(`\r${ref}`) ?? ''),
        state,
        blocking: this.blockingOf(flow, ref),
        json: nodeJson(flow, ref, state),
      };
    });
    return { cursor: next, meta, nodes };
  }

  override async meta(flowId: string): Promise<Record<string, string> | null> {
    const flow = this.live(flowId);
    return flow ? { ...flow.meta } : null;
  }

  // ---- parked nodes, the dead-letter sweep, the index: MemoryParkedNodes -------------------------------

  override park(type: string, nodes: ParkedNode[]): Promise<boolean[]> {
    return this.nodes.park(type, nodes);
  }

  override release(type: string, pairs: [string, string, '0' | '1'][]): Promise<string[]> {
    return this.nodes.release(type, pairs);
  }

  override unpark(type: string, nodes: { id: string; deps: string[] }[]): Promise<boolean[]> {
    return this.nodes.unpark(type, nodes);
  }

  /** A flow node of `type` was buried (see `MemoryParkedNodes.nodeBuried`). */
  nodeBuried(type: string, id: string, diedAt: number, errorJson: string): void {
    this.nodes.nodeBuried(type, id, diedAt, errorJson);
  }

  override deadNodes(type: string, count: number): Promise<[string, number, string | null][]> {
    return this.nodes.deadNodes(type, count);
  }

  override swept(type: string, ids: string[]): Promise<void> {
    return this.nodes.swept(type, ids);
  }

  override async indexed(flowId: string, createdAt: number): Promise<void> {
    this.index.set(flowId, createdAt);
  }

  override async newest(offset: number, limit: number): Promise<string[]> {
    const ids = [...this.index].sort(([a, x], [b, y]) => y - x || (a < b ? 1 : a > b ? -1 : 0)).map(([id]) => id);
    return rangeOf(ids, offset, offset + limit - 1);
  }

  override async unindex(ids: string[]): Promise<void> {
    for (const id of ids) this.index.delete(id);
  }

  /** Forgets every flow, parked node's bookkeeping, buried node and index entry (for `TestQueue.reset`). */
  clear(): void {
    this.flows.clear();
    this.nodes.clear();
    this.index.clear();
  }

  // ---- flow-record.lua ---------------------------------------------------------------------------------

  /** The flow's record, or undefined when it does not exist or expired (then it is dropped). */
  private live(flowId: string): MemoryFlow | undefined {
    const flow = this.flows.get(flowId);
    if (flow && flow.expireAt !== null && this.engine.clock.now() > flow.expireAt) {
      this.flows.delete(flowId);
      return undefined;
    }
    return flow;
  }

  /** flowEnd: the flow ends when every node is settled or blocked; it may run again (a re-drive). Its end state now, else ''. */
  private flowEnd(flow: MemoryFlow, now: number): string {
    const m = flow.meta;
    const state = m.state;
    if (state === undefined || state === 'creating') return '';
    const settled = num(m.done) + num(m.dead) + num(m.cancelled) + num(m.blocked);
    if (settled < num(m.total)) {
      if (state !== 'running') {
        m.state = 'running';
        delete m.ended;
        expireFlow(flow, now, 0);
      }
      return '';
    }
    let final = 'completed';
    if (m.cancel === '1') final = 'cancelled';
    else if (num(m.deadFail) > 0) final = 'failed';
    if (state === final) return '';
    m.state = final;
    m.ended = wholeMs(now);
    expireFlow(flow, now, this.retentionMs);
    return final;
  }

  /** How many of ref's dependencies block it. */
  private blockingOf(flow: MemoryFlow, ref: string): number {
    return num(flow.bk.get(`#${ref}`));
  }

  /** flowCascade: dependency `from` of each of `refs` became blocking (delta 1) or no longer is (-1); the refs to go on to. */
  private cascade(flow: MemoryFlow, from: string, refs: string[], delta: number, walk: boolean): string[] {
    const out: string[] = [];
    let blocked = 0;
    for (const r of refs) {
      const edge = `${r}\n${from}`;
      let changed: boolean;
      if (delta > 0) {
        changed = !flow.bk.has(edge);
        if (changed) flow.bk.set(edge, '1');
      } else {
        changed = flow.bk.delete(edge);
      }
      let k: number;
      if (changed) {
        k = num(flow.bk.get(`#${r}`)) + delta;
        flow.bk.set(`#${r}`, String(k));
        if (k <= 0) flow.bk.delete(`#${r}`);
      } else {
        k = this.blockingOf(flow, r);
      }
      if (!flow.st.has(r)) {
        const flipped = changed && ((delta > 0 && k === 1) || (delta < 0 && k <= 0));
        if (flipped) blocked += delta;
        if (flipped || (walk && delta > 0 && k > 0)) out.push(r);
      }
    }
    if (blocked !== 0) incrMeta(flow, 'blocked', blocked);
    return out;
  }

  /** flowCascadeFrom: a cascade from `ref` over its dependents from position `from`, at most `budget`; the budget left. */
  private cascadeFrom(flow: MemoryFlow, ref: string, from: number, delta: number, walk: boolean, budget: number, next: string[], rest: (string | number)[]): number {
    const [refs, resume] = linesFrom(flow.defs.get(`\n${ref}`), from, budget);
    next.push(...this.cascade(flow, ref, refs, delta, walk));
    if (resume !== null) rest.push(ref, resume);
    return budget - refs.length;
  }

  /** settle-7.lua's settleOne. */
  private settleOne(flow: MemoryFlow, ref: string, outcome: 'c' | 'x', json: string, budget: { left: number }): RawSettle {
    const raw = isNodeField(ref) ? flow.defs.get(ref) : undefined;
    if (raw === undefined) return [-1, 0, [], '', []];
    const def = JSON.parse(raw) as Omit<FlowDef, 'd' | 'n'>;
    const prev = flow.st.get(ref);
    let changed = 0;
    let delta = 0;
    if (outcome === 'c') {
      if (prev !== 'c') {
        changed = 1;
        flow.st.set(ref, 'c');
        if (json !== '') flow.res.set(ref, json);
        flow.err.delete(ref);
        incrMeta(flow, 'done', 1);
        if (prev === 'x') {
          incrMeta(flow, 'dead', -1);
          if (def.f === 'fail') incrMeta(flow, 'deadFail', -1);
          if (def.f !== 'ignore') delta = -1;
        } else if (prev === 'k') {
          incrMeta(flow, 'cancelled', -1);
        } else if (this.blockingOf(flow, ref) > 0) {
          incrMeta(flow, 'blocked', -1);
        }
      }
    } else if (outcome === 'x') {
      if (prev === 'c' || prev === 'k') return [0, 0, [], '', []];
      if (prev === undefined) {
        changed = 1;
        flow.st.set(ref, 'x');
        if (json !== '') flow.err.set(ref, json);
        incrMeta(flow, 'dead', 1);
        if (def.f === 'fail') incrMeta(flow, 'deadFail', 1);
        if (def.f !== 'ignore') delta = 1;
        if (this.blockingOf(flow, ref) > 0) incrMeta(flow, 'blocked', -1);
      }
    }
    // NOTE: a repeated death walks its blocked dependents again: the worker that recorded it may have died in
    // the middle of the cascade (each edge counts once)
    let walk = false;
    if (outcome === 'x' && changed === 0 && def.f !== 'ignore') {
      delta = 1;
      walk = true;
    }
    const next: string[] = [];
    const rest: (string | number)[] = [];
    if (delta !== 0) {
      if (budget.left > 0) budget.left = this.cascadeFrom(flow, ref, 1, delta, walk, budget.left, next, rest);
      else rest.push(ref, 1);
    }
    let tell = '';
    if (outcome === 'c' || def.f === 'ignore') tell = flow.defs.get(`\n${ref}`) ?? '';
    if (walk) delta = 2;
    return [changed, delta, next, tell, rest];
  }
}
