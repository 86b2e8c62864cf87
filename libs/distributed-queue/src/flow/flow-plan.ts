import { routeDelayType } from '../distributed-queue.constants';
import type { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { InvalidFlowError, InvalidPayloadError, PayloadTooLargeError } from '../errors';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import { encodeRouteItem } from '../route/route-producer';
import { encodePayload } from '../delay/task-codec';
import { checkGroup, checkKey, checkPriority, toDue } from '../services/task-input';
import { checkFlowGraph, type CheckedNode } from './flow-graph';
import { flowNodeId } from './flow-keys';
import type { FlowDef } from './flow.store';

/** A node ready to write: its def, its task's id and the payload its task is created with. */
export interface PlannedNode {
  ref: string;
  id: string;
  def: FlowDef;
  payload: string;
}

/**
 * Checks a flow and plans its writes, before anything is written: types known, ordered nodes with a key,
 * payloads serialisable and within `maxPayloadBytes`. An ordered node waits and enters its partition through
 * the route's delay type (its task there carries the key and the route item, as a delayed ordered task does).
 * @throws InvalidFlowError (with the node's ref)
 */
export function planFlow(nodes: unknown, flowId: string, explorer: DistributedQueueExplorer, options: ResolvedModuleOptions): PlannedNode[] {
  const checked = checkFlowGraph(nodes);
  const parkType = new Map<string, string>();
  const planned = checked.map((node, index) => {
    try {
      return planNode(node, index, flowId, explorer, options, parkType);
    } catch (error) {
      // NOTE: a payload's own errors keep their type (as submit throws them); the rest name the node.
      if (error instanceof InvalidFlowError || error instanceof PayloadTooLargeError || error instanceof InvalidPayloadError) throw error;
      throw new InvalidFlowError((error as Error).message, node.ref);
    }
  });
  planned.forEach((node, i) => (node.def.n = checked[i].dependents.flatMap((d) => [d, parkType.get(d)!])));
  return planned;
}

function planNode(node: CheckedNode, index: number, flowId: string, explorer: DistributedQueueExplorer, options: ResolvedModuleOptions, parkType: Map<string, string>): PlannedNode {
  const { ref, type, node: given } = node;
  if (!explorer.isKnown(type)) throw new InvalidFlowError(`unknown task type "${type}" (no worker here, not in the types option)`, ref);
  const id = flowNodeId(flowId, ref);
  if (id.length > 256) throw new InvalidFlowError('the flow id and ref make a task id longer than 256 characters', ref);
  const due = toDue({ delay: given.delay });
  const def: FlowDef = { t: type, pt: type, d: node.deps, n: [], f: node.policy, i: index };
  if ('delay' in due && due.delay > 0) def.dl = due.delay;
  let payload = encodePayload(given.payload, options.maxPayloadBytes);
  if (explorer.isOrdered(type)) {
    if (!options.route) throw new InvalidFlowError(`type "${type}" is ordered and the module has no route option`, ref);
    if (given.priority !== undefined || given.group !== undefined) throw new InvalidFlowError('ordered types take no priority or group', ref);
    def.k = checkKey(given.key, 0);
    def.pt = routeDelayType(options.route.qId);
    payload = JSON.stringify({ key: def.k, item: encodeRouteItem(id, type, def.k, payload), at: Date.now() });
  } else {
    if (given.key !== undefined) throw new InvalidFlowError(`type "${type}" is not ordered: a key is for ordered types`, ref);
    if (given.priority !== undefined) def.p = checkPriority(given.priority);
    if (given.group !== undefined) def.g = checkGroup(given.group);
  }
  parkType.set(ref, def.pt);
  // NOTE: a delay-queue node with dependencies is stored with a leading `&` (JSON never begins with it): its
  // worker reads their results before its handler; a root's finds none to read (one call fewer).
  if (node.deps.length > 0 && def.pt === type) payload = `&${payload}`;
  return { ref, id, def, payload };
}
