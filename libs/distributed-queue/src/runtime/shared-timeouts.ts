import { setLongTimeout, type LongTimer } from './long-timer';

/** A timeout `SharedTimeouts.add` armed: `clear()` stops it (safe to call more than once). */
export interface SharedTimeout {
  clear(): void;
}

interface Entry extends SharedTimeout {
  /** When it is due (performance.now() ms). */
  at: number;
  fire: () => void;
  group?: Group;
}

interface Group {
  /** When the group was opened (performance.now() ms): its timer fires `ms` after. */
  openedAt: number;
  entries: Set<Entry>;
  timer?: LongTimer;
}

/** How long a group takes new members: timeouts set within this span share one timer. */
const GROUP_SPAN_MS = 1;

/**
 * Timeouts of one length for many tasks that start close together: one timer per group of timeouts set
 * within `GROUP_SPAN_MS` of each other, instead of one per task (a timer per task was a tenth of an ordered
 * task's CPU). The group fires `GROUP_SPAN_MS` after its members' time, so at most that late, never early:
 * a member still not due when its group fires (a timer may fire a little early) gets a timer of its own for
 * the rest.
 */
export class SharedTimeouts {
  private open?: Group;

  constructor(private readonly ms: number) {}

  /** Calls `fire` `ms` after now, unless cleared first. */
  add(fire: () => void): SharedTimeout {
    const now = performance.now();
    const entry: Entry = { at: now + this.ms, fire, clear: () => this.remove(entry) };
    let group = this.open;
    if (!group || now - group.openedAt > GROUP_SPAN_MS) {
      group = { openedAt: now, entries: new Set() };
      this.open = group;
      const opened = group;
      group.timer = setLongTimeout(() => this.expire(opened), this.ms + GROUP_SPAN_MS);
    }
    entry.group = group;
    group.entries.add(entry);
    return entry;
  }

  private remove(entry: Entry): void {
    const group = entry.group;
    if (!group) return;
    entry.group = undefined;
    group.entries.delete(entry);
    if (group.entries.size > 0) return;
    group.timer?.clear();
    if (this.open === group) this.open = undefined;
  }

  private expire(group: Group): void {
    if (this.open === group) this.open = undefined;
    const now = performance.now();
    for (const entry of [...group.entries]) {
      entry.group = undefined;
      group.entries.delete(entry);
      if (entry.at <= now) entry.fire();
      else this.rearm(entry, entry.at - now);
    }
  }

  /** A member not due when its group fired: a timer of its own for the rest. */
  private rearm(entry: Entry, left: number): void {
    const group: Group = { openedAt: -Infinity, entries: new Set([entry]) };
    entry.group = group;
    group.timer = setLongTimeout(() => this.expire(group), left);
  }
}
