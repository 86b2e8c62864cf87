import { delayQueueKeys } from '../redis/queue-keys';
import type { RedisClient } from '../redis/script-loader';

/** One running task's reports for one call (see scripts/delay/report-4.lua). */
export interface ReportEntry {
  id: string;
  token: string;
  /** Its last progress as JSON, '' for none. */
  progress: string;
  /** Its new log lines, '\n'-joined ('' for none). */
  lines: string;
  /** The number of the first of them in its run (lines are numbered from 1 per reservation: see task-logs.lua). */
  firstSeq: number;
  /** The attempt ended: its progress is cleared. */
  final: boolean;
}

/** How many log lines and bytes each task keeps (the oldest go first). */
export interface LogBounds {
  maxLines: number;
  maxBytes: number;
}

interface ReportScripts {
  dqDelayReport(...args: (string | number)[]): Promise<string[]>;
}

/** Writes what running tasks report: their progress and log lines (see scripts/includes/task-logs.lua). */
export class ReportsStore {
  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
    private readonly streamMaxLen: number,
  ) {}

  /** Writes `entries` of one type; resolves with the ids whose reservation was no longer theirs (dropped). */
  async write(type: string, entries: ReportEntry[], bounds: LogBounds): Promise<string[]> {
    const k = delayQueueKeys(this.prefix, type);
    const args: (string | number)[] = [k.running, k.jobs, k.log, k.followed, this.streamMaxLen, bounds.maxLines, bounds.maxBytes];
    for (const e of entries) args.push(e.id, e.final ? `${e.token}!` : e.token, e.progress, e.lines, e.firstSeq);
    return (this.client as unknown as ReportScripts).dqDelayReport(...args);
  }
}
