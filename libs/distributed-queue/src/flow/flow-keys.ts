/**
 * A flow's keys (see `scripts/includes/flow-record.lua`): all under the hash tag `{<prefix>:flow:<id>}`, so a
 * flow's record lives in one cluster slot, and different flows spread over the masters.
 */
export function flowKeys(prefix: string, flowId: string): string[] {
  const base = `${prefix}:{${prefix}:flow:${flowId}}`;
  return ['meta', 'defs', 'pl', 'st', 'bk', 'res', 'err'].map((name) => `${base}:${name}`);
}

/** ZSET flow id -> created (ms): the flows, newest last (the dashboard's list); pruned as flows expire. */
export function flowIndexKey(prefix: string): string {
  return `${prefix}:{${prefix}:flows}:index`;
}

/** The task id of a flow node: `&<flow id>:<ref>` (`&` is kept for them: user ids cannot begin with it). */
export function flowNodeId(flowId: string, ref: string): string {
  return `&${flowId}:${ref}`;
}

/** The flow and ref of a flow node's task id; undefined for any other id. NOTE: hot path: one char test. */
export function parseFlowNodeId(id: string): { flowId: string; ref: string } | undefined {
  if (id.charCodeAt(0) !== 38 /* & */) return undefined;
  const colon = id.indexOf(':');
  if (colon < 2) return undefined;
  return { flowId: id.slice(1, colon), ref: id.slice(colon + 1) };
}
