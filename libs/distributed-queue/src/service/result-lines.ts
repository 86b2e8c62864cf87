import type { ServerResponse } from 'http';
import type { DeliveryResult } from './delivery-signature';

/** One NDJSON line of a result; a result that JSON cannot write is reported without it. */
export function resultLine(result: DeliveryResult): string {
  try {
    return JSON.stringify(result);
  } catch {
    return JSON.stringify({ i: result.i, status: result.status });
  }
}

/**
 * Writes lines to a response, those of one tick in one write (tasks that end together cost one packet);
 * nothing once the scheduler has hung up.
 */
export class LineWriter {
  private pending = '';
  private scheduled = false;

  constructor(private readonly res: ServerResponse) {}

  push(line: string): void {
    this.pending += `${line}\n`;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    if (!this.pending) return;
    if (!this.res.destroyed && !this.res.writableEnded) this.res.write(this.pending);
    this.pending = '';
  }

  /** Writes what is left and ends the response. */
  end(): void {
    this.flush();
    if (!this.res.destroyed && !this.res.writableEnded) this.res.end();
  }
}
