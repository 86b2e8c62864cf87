import type { ParkedNode } from '../flow/flow.store';
import type { MemoryEngine } from './memory-engine';
import { rangeOf } from './memory-flow-text';

/** A parked node's entry in `<ws>:fp` (see flow-park.lua): dependencies left, its delay, nothing to read so far. */
interface ParkedEntry {
  left: number;
  delay: number;
  group: string;
  none: boolean;
}

/** A type's parked bookkeeping: `<ws>:fp` (id -> entry) and `<ws>:fd` ('<id>\n<dependency ref>' fields). */
interface ParkedOfType {
  fp: Map<string, ParkedEntry>;
  fd: Set<string>;
}

/** A flow node buried and not swept yet (ZSET `<dead>:f`, see bury.lua): its time of death and the error it was buried with. */
interface BuriedNode {
  diedAt: number;
  errorJson: string;
}

/**
 * The parked flow nodes of the testing module's delay-queue types, as flow-park-4, flow-release-5 and
 * flow-unpark-2 keep them (flow-park.lua): a parked node is a task of the in-memory engine (`engine.park`:
 * its id taken, `getTask` says pending) and the dependencies it still waits for are counted here; the one
 * that loses its last enters its queue (`engine.unpark`). And bury.lua's `<dead>:f`: the nodes buried and not
 * swept yet.
 */
export class MemoryParkedNodes {
  private readonly parked = new Map<string, ParkedOfType>();
  /** Per type: `<dead>:f`. */
  private readonly buried = new Map<string, Map<string, BuriedNode>>();

  constructor(private readonly engine: MemoryEngine) {}

  async park(type: string, nodes: ParkedNode[]): Promise<boolean[]> {
    const { fp, fd } = this.parkedOf(type);
    return nodes.map((n) => {
      const node: { id: string; payload: string; priority?: number; group?: string } = { id: n.id, payload: n.payload };
      if (n.priority !== undefined) node.priority = n.priority;
      if (n.group !== undefined && n.group !== '') node.group = n.group;
      if (!this.engine.park(type, node)) return false;
      // NOTE: HSET, as flow-park-4.lua: fields a former parking of this id left stay, the entry is new
      for (const dep of n.deps) fd.add(`${n.id}\n${dep}`);
      fp.set(n.id, { left: n.deps.length, delay: Math.floor(n.delay), group: n.group ?? '', none: true });
      return true;
    });
  }

  async release(type: string, pairs: [string, string, '0' | '1'][]): Promise<string[]> {
    const { fp, fd } = this.parkedOf(type);
    const released: string[] = [];
    for (const [id, dep, left] of pairs) {
      // NOTE: a repeated or late news finds no field and changes nothing: a node enters its queue at most once
      if (!fd.delete(`${id}\n${dep}`)) continue;
      const entry = fp.get(id);
      if (!entry) continue;
      entry.none = entry.none && left === '0';
      if (entry.left > 1) {
        entry.left--;
        continue;
      }
      fp.delete(id);
      // NOTE: the real script also drops the payload's leading '&' when `entry.none` (its worker then reads no
      // dependencies); the engine's task keeps it (the memory runner reads every node's context, which gives
      // the same empty results and failures, and every reader of the payload strips the '&')
      if (this.engine.unpark(type, id, entry.delay)) released.push(id);
    }
    return released;
  }

  async unpark(type: string, nodes: { id: string; deps: string[] }[]): Promise<boolean[]> {
    const { fp, fd } = this.parkedOf(type);
    return nodes.map(({ id, deps }) => {
      if (!fp.delete(id)) return false;
      this.engine.dropParked(type, id);
      for (const dep of deps) fd.delete(`${id}\n${dep}`);
      return true;
    });
  }

  /**
   * A flow node of `type` was buried (bury.lua notes it in `<dead>:f`): the runner calls this at each burial,
   * with the time of death and the error JSON it stored. Ids that are not flow nodes' are ignored, as there.
   */
  nodeBuried(type: string, id: string, diedAt: number, errorJson: string): void {
    if (id.charCodeAt(0) !== 38 /* & */) return;
    let buried = this.buried.get(type);
    if (!buried) this.buried.set(type, (buried = new Map()));
    buried.set(id, { diedAt, errorJson });
  }

  async deadNodes(type: string, count: number): Promise<[string, number, string | null][]> {
    const buried = [...(this.buried.get(type) ?? new Map<string, BuriedNode>())].sort(([a, x], [b, y]) => x.diedAt - y.diedAt || (a < b ? -1 : a > b ? 1 : 0));
    return rangeOf(buried, 0, count - 1).map(([id, { diedAt, errorJson }]) => [id, diedAt, this.errorNow(type, id, errorJson)]);
  }

  async swept(type: string, ids: string[]): Promise<void> {
    const buried = this.buried.get(type);
    for (const id of ids) buried?.delete(id);
  }

  clear(): void {
    this.parked.clear();
    this.buried.clear();
  }

  private parkedOf(type: string): ParkedOfType {
    let parked = this.parked.get(type);
    if (!parked) this.parked.set(type, (parked = { fp: new Map(), fd: new Set() }));
    return parked;
  }

  /**
   * What the type's errors hash holds for a buried node now (deadNodes reads it at the time of the call): the
   * error it was buried with while it is dead, a retry's error while it runs again after a re-drive, none once
   * it was re-driven (and not failed since), completed or deleted.
   */
  private errorNow(type: string, id: string, errorJson: string): string | null {
    const task = this.engine.type(type).tasks.get(id);
    if (!task) return null;
    if (task.state === 'dead') return errorJson;
    if ((task.state === 'waiting' || task.state === 'running') && task.error) return JSON.stringify(task.error);
    return null;
  }
}
