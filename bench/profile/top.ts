/** A V8 CPU profile as `--cpu-prof` writes it (the parts read here). */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }[];
  samples: number[];
  timeDeltas: number[];
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
    const file = frame.url.replace(/^.*node_modules\//, '').replace(/^.*\/(libs|bench|test)\//, '$1/');
    const key = `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
    selfUs.set(key, (selfUs.get(key) ?? 0) + delta);
    total += delta;
  });
  const rows = [...selfUs.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit);
  return rows.map(([key, us]) => `${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)} %  ${key}`).join('\n');
}
