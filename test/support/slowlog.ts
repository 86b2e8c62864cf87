import type { Cluster, Redis } from 'ioredis';

/*
 * What Redis itself timed: its SLOWLOG, read on every master (by default it logs the last 128 commands that
 * took over 10 ms). A test marks where the log stands, acts, then asks for the slowest command since that
 * named its keys.
 */

/** The newest SLOWLOG entry id of every master (what a later read starts after). */
export async function slowlogMarks(client: Redis | Cluster): Promise<Map<Redis, number>> {
  const nodes = 'nodes' in client && typeof client.nodes === 'function' ? (client as Cluster).nodes('master') : [client as Redis];
  const marks = new Map<Redis, number>();
  for (const node of nodes) {
    const [newest] = (await node.call('SLOWLOG', 'GET', '1')) as [number, ...unknown[]][];
    marks.set(node, newest ? Number(newest[0]) : -1);
  }
  return marks;
}

/** The longest (ms) of the commands logged since `marks` that name `prefix` (a key or an argument): 0 when none. */
export async function slowestSince(client: Redis | Cluster, marks: Map<Redis, number>, prefix: string): Promise<number> {
  let slowest = 0;
  for (const [node, mark] of marks) {
    const entries = (await node.call('SLOWLOG', 'GET', '1000')) as [number, number, number, string[]][];
    for (const [id, , micros, args] of entries) {
      if (id > mark && args.some((arg) => String(arg).includes(prefix))) slowest = Math.max(slowest, Math.round(micros / 1000));
    }
  }
  return slowest;
}

