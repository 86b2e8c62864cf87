/**
 * Plans which live machine owns each partition: every machine gets ⌊N/M⌋ or ⌈N/M⌉ partitions, and a
 * partition keeps its owner whenever that owner is live and within its share (few moves on rebalance).
 *
 * @param partitions partition count N
 * @param machines live machine ids (order breaks ties: earlier first)
 * @param current current owner of each partition (undefined when none)
 * @returns the desired owner of each partition (all undefined when no machine is live)
 */
export function planAssignment(partitions: number, machines: string[], current: (string | undefined)[]): (string | undefined)[] {
  const plan: (string | undefined)[] = new Array(partitions).fill(undefined);
  if (machines.length === 0) return plan;
  const live = new Set(machines);
  const held = new Map<string, number[]>(machines.map((m) => [m, []]));
  for (let p = 0; p < partitions; p++) {
    const owner = current[p];
    if (owner !== undefined && live.has(owner)) held.get(owner)!.push(p);
  }
  // The ⌈N/M⌉ shares go to the machines holding most already, so that fewer partitions move.
  const base = Math.floor(partitions / machines.length);
  let extra = partitions % machines.length;
  const byHeld = [...machines].sort((a, b) => held.get(b)!.length - held.get(a)!.length);
  const quota = new Map<string, number>();
  for (const m of byHeld) quota.set(m, base + (extra-- > 0 ? 1 : 0));
  const free: number[] = [];
  for (let p = 0; p < partitions; p++) {
    const owner = current[p];
    if (owner !== undefined && live.has(owner) && quota.get(owner)! > 0) {
      plan[p] = owner;
      quota.set(owner, quota.get(owner)! - 1);
    } else {
      free.push(p);
    }
  }
  for (const p of free) {
    const m = machines.reduce((best, c) => (quota.get(c)! > quota.get(best)! ? c : best));
    plan[p] = m;
    quota.set(m, quota.get(m)! - 1);
  }
  return plan;
}
