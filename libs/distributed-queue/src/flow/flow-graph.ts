import { checkedTypeOf } from '../contracts/task-contract';
import { InvalidFlowError } from '../errors';
import { quote } from '../errors/quote';
import type { FlowFailurePolicy, FlowNode } from '../interfaces';
import { DOT_SEGMENT_RULE, isDotSegment, isStorable } from '../runtime/storable-text';

/** Nodes in one flow at most. */
export const MAX_FLOW_NODES = 100_000;
/** Dependencies (or dependents) of one node at most: bounds the work of one script call on it. */
export const MAX_NODE_EDGES = 10_000;
const NODE_OPTIONS = ['ref', 'type', 'payload', 'dependsOn', 'key', 'delay', 'priority', 'group', 'onFailure'];
const POLICIES: FlowFailurePolicy[] = ['fail', 'ignore', 'continue'];
const FLOW_ID = /^[A-Za-z0-9_.-]{1,64}$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A node checked: its type resolved, its edges both ways. */
export interface CheckedNode {
  ref: string;
  type: string;
  node: FlowNode;
  deps: string[];
  dependents: string[];
  policy: FlowFailurePolicy;
}

/** Checks a flow id given to `submitFlow`. */
export function checkFlowId(id: unknown): string {
  if (typeof id !== 'string' || !FLOW_ID.test(id) || isDotSegment(id)) {
    throw new InvalidFlowError(`the flow id must be 1 to 64 characters of A-Z a-z 0-9 _ . -, ${DOT_SEGMENT_RULE}, got ${quote(id)}`);
  }
  return id;
}

function checkRef(ref: unknown, where: string): string {
  if (typeof ref !== 'string' || ref.length === 0 || ref.length > 128 || CONTROL.test(ref) || !isStorable(ref)) {
    throw new InvalidFlowError(`${where}: a ref must be 1 to 128 characters without control characters or unpaired surrogates, got ${quote(ref)}`);
  }
  return ref;
}

/**
 * Checks a flow's shape: refs unique, every dependency known, no cycle (Kahn's algorithm), the edges of
 * a node bounded. The node options themselves are checked by the caller (types, payloads, due times).
 * @throws InvalidFlowError
 */
export function checkFlowGraph(nodes: unknown): CheckedNode[] {
  if (!Array.isArray(nodes) || nodes.length === 0) throw new InvalidFlowError('nodes must be a non-empty array');
  if (nodes.length > MAX_FLOW_NODES) throw new InvalidFlowError(`at most ${MAX_FLOW_NODES} nodes, got ${nodes.length}`);
  const byRef = new Map<string, CheckedNode>();
  nodes.forEach((raw: unknown, index) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new InvalidFlowError(`nodes[${index}] must be an object`);
    const node = raw as FlowNode;
    const ref = checkRef(node.ref, `nodes[${index}]`);
    for (const name of Object.keys(node)) {
      if (!NODE_OPTIONS.includes(name)) throw new InvalidFlowError(`unknown option "${name}" (known: ${NODE_OPTIONS.join(', ')})`, ref);
    }
    if (byRef.has(ref)) throw new InvalidFlowError('the ref is used twice', ref);
    let type: string;
    try {
      type = checkedTypeOf(node.type);
    } catch (error) {
      throw new InvalidFlowError((error as Error).message, ref);
    }
    const deps = node.dependsOn ?? [];
    if (!Array.isArray(deps)) throw new InvalidFlowError('dependsOn must be an array of refs', ref);
    if (deps.length > MAX_NODE_EDGES) throw new InvalidFlowError(`at most ${MAX_NODE_EDGES} dependencies, got ${deps.length}`, ref);
    if (new Set(deps).size !== deps.length) throw new InvalidFlowError('dependsOn names a node twice', ref);
    const policy = node.onFailure ?? 'fail';
    if (!POLICIES.includes(policy)) throw new InvalidFlowError(`onFailure must be one of ${POLICIES.join(', ')}, got ${quote(policy)}`, ref);
    byRef.set(ref, { ref, type, node, deps: deps.map((d) => checkRef(d, `node "${ref}" dependsOn`)), dependents: [], policy });
  });
  for (const checked of byRef.values()) {
    for (const dep of checked.deps) {
      const target = byRef.get(dep);
      if (!target) throw new InvalidFlowError(`depends on "${dep}", which is not a node of the flow`, checked.ref);
      if (dep === checked.ref) throw new InvalidFlowError('depends on itself', checked.ref);
      target.dependents.push(checked.ref);
      if (target.dependents.length > MAX_NODE_EDGES) throw new InvalidFlowError(`at most ${MAX_NODE_EDGES} dependents`, dep);
    }
  }
  assertAcyclic(byRef);
  return [...byRef.values()];
}

function assertAcyclic(byRef: Map<string, CheckedNode>): void {
  const left = new Map<string, number>();
  const ready: string[] = [];
  for (const node of byRef.values()) {
    left.set(node.ref, node.deps.length);
    if (node.deps.length === 0) ready.push(node.ref);
  }
  let seen = 0;
  while (ready.length > 0) {
    const ref = ready.pop()!;
    seen++;
    for (const next of byRef.get(ref)!.dependents) {
      const n = left.get(next)! - 1;
      left.set(next, n);
      if (n === 0) ready.push(next);
    }
  }
  if (seen === byRef.size) return;
  const inCycle = [...left].find(([, n]) => n > 0)![0];
  throw new InvalidFlowError('the flow has a cycle through this node (a node cannot wait for itself)', inCycle);
}
