/** `1.5 s` under ten seconds, `42 s` from there. */
export const seconds = (ms: number): string => (ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`);

/**
 * The library's own calls that failed while a connection was in trouble (down, or its server out of memory),
 * counted by what they were, to be said in one line instead of one line each.
 */
export class FailureTally {
  private failed = new Map<string, number>();

  add(what: string): void {
    this.failed.set(what, (this.failed.get(what) ?? 0) + 1);
  }

  /** `; N calls failed meanwhile (fetch ×3, …)`, or '' when none did; starts counting anew. */
  take(): string {
    const failed = this.failed;
    this.failed = new Map();
    let total = 0;
    for (const count of failed.values()) total += count;
    if (total === 0) return '';
    const kinds = [...failed].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([what, n]) => `${what} ×${n}`);
    return `; ${total} call(s) of the library failed meanwhile (${kinds.join(', ')}${failed.size > 6 ? ', …' : ''})`;
  }
}
