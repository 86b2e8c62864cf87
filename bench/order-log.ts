/**
 * Order bookkeeping: a task's first start must come after the first start of every earlier task of its key.
 * Starts carry the time they happened (one machine clock for every process here), so a key that moved to
 * another process is judged by when its tasks started, not by when their reports arrived.
 */
export class OrderLog {
  private readonly firstStart = new Map<string, Map<number, number>>();
  starts = 0;
  /** Each machine's CPU seconds as of its latest report. */
  readonly cpu = new Map<string, number>();
  readonly lastStart = new Map<number, { at: number; machine: string }>();

  record(key: string, n: number, at: number): void {
    this.starts++;
    let starts = this.firstStart.get(key);
    if (!starts) this.firstStart.set(key, (starts = new Map()));
    const seen = starts.get(n);
    if (seen === undefined || at < seen) starts.set(n, at);
  }

  /** Tasks that first started before an earlier task of their key did (ties within a millisecond pass). */
  get violations(): number {
    let count = 0;
    for (const starts of this.firstStart.values()) {
      for (const [n, at] of starts) {
        const before = starts.get(n - 1);
        if (n > 0 && (before === undefined || at < before)) count++;
      }
    }
    return count;
  }

  distinct(): number {
    let total = 0;
    for (const starts of this.firstStart.values()) total += starts.size;
    return total;
  }
}

/** Submits round by round (task n of every key, in bulk), so each key's tasks are added in order. */
export async function submitRounds(submitRound: (n: number, keys: string[]) => Promise<unknown>, keys: number, perKey: number, paceMs = 0): Promise<void> {
  const names = Array.from({ length: keys }, (_, k) => `key-${k}`);
  for (let n = 0; n < perKey; n++) {
    await submitRound(n, names);
    if (paceMs) await new Promise((resolve) => setTimeout(resolve, paceMs));
  }
}
