/** Edits (insert, delete, replace, swap of neighbours) that turn `a` into `b`, case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) => [i, ...Array<number>(t.length).fill(0)]);
  for (let j = 1; j <= t.length; j++) d[0][j] = j;
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[s.length][t.length];
}

/**
 * The known key closest to `key` when it is close enough to be a slip (a third of its length, at least
 * one edit; or the same letters in another case, or a singular/plural), else undefined.
 */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(key, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const limit = Math.max(1, Math.floor(Math.min(key.length, best?.length ?? 0) / 3));
  return best !== undefined && bestDistance <= limit ? best : undefined;
}

/** " (did you mean port?)" when `key` is close to a known key, else "". */
export function didYouMean(key: string, known: readonly string[]): string {
  const near = closestKey(key, known);
  return near ? ` (did you mean ${near}?)` : '';
}
