import type { LoggerService } from '@nestjs/common';

/** Keeps what the application logs (install it with `Logger.overrideLogger`). */
export class CapturingLogger implements LoggerService {
  readonly entries: { level: string; message: string }[] = [];
  log = (m: unknown) => void this.entries.push({ level: 'log', message: String(m) });
  error = (m: unknown) => void this.entries.push({ level: 'error', message: String(m) });
  warn = (m: unknown) => void this.entries.push({ level: 'warn', message: String(m) });
  debug = (m: unknown) => void this.entries.push({ level: 'debug', message: String(m) });
  verbose = (m: unknown) => void this.entries.push({ level: 'verbose', message: String(m) });
  /** The messages of `level` matching `pattern`. */
  lines(level: string, pattern = /./): string[] {
    return this.entries.filter((e) => e.level === level && pattern.test(e.message)).map((e) => e.message);
  }
}
