import type { LoggerService } from '@nestjs/common';
import { isInternalType } from '../distributed-queue.constants';
import { typeLabel } from './type-label';

const LEVELS = ['log', 'error', 'warn', 'debug', 'verbose', 'fatal'] as const;

/**
 * The logger of a consumer of `type`: for a user's type `logger` itself; for one of the library's own, a
 * logger that names the type by what it does (see `typeLabel`) in the `[type]` that starts each message,
 * and a tick by its schedule (`[tick of schedule "n"] task n@3@1700000000000 attempt 2 failed ...`).
 */
export function labelledLogger(logger: LoggerService, type: string): LoggerService {
  if (!isInternalType(type)) return logger;
  const head = `[${type}] `;
  const relabel = (message: unknown): unknown => {
    if (typeof message !== 'string' || !message.startsWith(head)) return message;
    const rest = message.slice(head.length);
    const id = /^task (\S+)/.exec(rest)?.[1];
    return `[${typeLabel(type, id)}] ${rest}`;
  };
  const labelled: Partial<LoggerService> = {};
  for (const level of LEVELS) {
    const write = logger[level];
    if (write) labelled[level] = (message: unknown, ...rest: unknown[]) => write.call(logger, relabel(message), ...rest);
  }
  return labelled as LoggerService;
}
