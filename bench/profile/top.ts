/** A V8 CPU profile as `--cpu-prof` writes it (the parts read here). */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** A frame's name as the tables show it: function, file (from its package or libs/bench/test), line. */
function frameName(frame: CpuProfile['nodes'][number]['callFrame']): string {
  const file = frame.url.replace(/^.*node_modules\//, '').replace(/^.*\/(libs|bench|test)\//, '$1/');
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
}

/**
 * The `limit` functions whose url matches `only` with the most total time (their own and their callees',
 * each sample counted once per function on its stack), as ms and share of the profile's non-idle time.
 */
export function topTotalTime(profile: CpuProfile, limit: number, only: RegExp): string {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const totalUs = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const leaf = byNode.get(id)?.callFrame.functionName;
    if (leaf === '(idle)' || leaf === '(program)') return;
    busy += delta;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byNode.get(at)!.callFrame;
      if (!only.test(frame.url)) continue;
      const key = frameName(frame);
      if (seen.has(key)) continue;
      seen.add(key);
      totalUs.set(key, (totalUs.get(key) ?? 0) + delta);
    }
  });
  const rows = [...totalUs.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit);
  return rows.map(([key, us]) => `${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / busy).toFixed(1).padStart(5)} %  ${key}`).join('\n');
}

/** The `limit` functions with the most self time, as a table of ms, share and where they live. */
export function topSelfTime(profile: CpuProfile, limit: number): string {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const frame = byNode.get(id)?.callFrame;
    if (!frame) return;
    const key = frameName(frame);
    selfUs.set(key, (selfUs.get(key) ?? 0) + delta);
    total += delta;
  });
  const rows = [...selfUs.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit);
  return rows.map(([key, us]) => `${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)} %  ${key}`).join('\n');
}
