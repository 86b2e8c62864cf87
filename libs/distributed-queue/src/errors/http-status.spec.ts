import { NotFoundException } from '@nestjs/common';
import { readFileSync } from 'fs';
import { join } from 'path';
import * as api from '../index';
import {
  DistributedQueueError, HistoryNotConfiguredError, InvalidOptionsError, InvalidScheduleError, InvalidSubmitOptionsError, PartitionFullError, ShutdownError,
  TaskCancelledError, UnknownTaskTypeError,
} from './distributed-queue.error';
import { WaitTimeoutError, TaskNotFoundError } from './awaiting.error';
import { DurabilityError } from './durability.error';
import { HistoryFlushTimeoutError } from './history-schema.error';
import { httpErrorOf } from './http-status';
import { RedisOutOfMemoryError } from './redis-memory.error';
import { RedisUnavailableError, SubmitIncompleteError } from './redis-unavailable.error';
import { SchedulerRequestError } from './service-url.error';

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * The exported errors `httpErrorOf` deliberately does not know (it answers undefined: a 500 without details,
 * logged), each with why no status fits. Any other exported error without a status fails the test below.
 */
const NO_STATUS: Record<string, string> = {
  DistributedQueueError: 'the base class, never thrown itself (the scheduler answers a subclass it does not know 400)',
  InvalidTaskWorkerError: 'raised only while the application starts: no endpoint can meet it',
  PartitionShrinkError: 'raised only while the route queue starts: no endpoint can meet it',
  HistorySchemaError: 'raised only while the history store starts: no endpoint can meet it',
  RedisEvictionPolicyError: 'raised only while the application starts: no endpoint can meet it',
  TaskTimeoutError: "a failed attempt's reason, recorded by the worker: never a call's error",
  LeaseLostError: "a handler signal's reason: never a call's error",
  CorruptTaskError: "a dead letter's reason, recorded by the worker: never a call's error",
  RateLimitedError: "thrown by the application's own handler, taken by the worker: never a call's error",
  UnrecoverableError: "thrown by the application's own handler, recorded as the dead letter's reason: never a call's error",
  FlowResultError: "a flow node's failed attempt, recorded by the worker: never a call's error",
  DeliveryFailedError: "the scheduler's failed delivery, recorded as the attempt: never a call's error",
  DeliveryNotMadeError: "the scheduler's hand-back of a delivery: never a call's error",
  NoLiveInstanceError: "the scheduler's hand-back of a delivery: never a call's error",
  TaskDeadError: "the awaited task failed in its handler: a server-side failure, the 500 (logged) of an unknown error is right",
  ResultNotKeptError: "the awaited task's result was too large or not JSON: a server-side failure, the 500 (logged) of an unknown error is right",
};

/** Every error class the package exports, by name. */
const exportedErrors = Object.entries(api as Record<string, unknown>).filter(
  (entry): entry is [string, ErrorClass] => typeof entry[1] === 'function' && (entry[1] === DistributedQueueError || entry[1].prototype instanceof DistributedQueueError),
);

/** The status `httpErrorOf` gives an error of the class (an instance made without its constructor's arguments). */
const statusOf = (kind: ErrorClass): number | undefined => httpErrorOf(Object.create(kind.prototype as object))?.status;

describe('httpErrorOf', () => {
  it('answers the library\'s errors with their status and name, Nest\'s with theirs, anything else not at all', () => {
    const cases: [unknown, number | undefined][] = [
      [new UnknownTaskTypeError('t'), 404],
      [new InvalidSubmitOptionsError('delay', 'bad'), 400],
      [new RedisUnavailableError('dq:x:commands', '127.0.0.1:1', true, 'no reply'), 503],
      [new DurabilityError(0, 1, 100, 3, 'no replica'), 503],
      [new RedisOutOfMemoryError('dq:x:commands', '127.0.0.1:1', 'OOM command not allowed'), 507],
      [new InvalidScheduleError('nightly', 'bad cron'), 400],
      [new InvalidOptionsError('route.partitions', 'bad'), 400],
      [new TaskNotFoundError('t', 'x'), 404],
      [new HistoryNotConfiguredError(), 404],
      [new PartitionFullError(3, 10), 503],
      [new WaitTimeoutError('t', 'x', 100), 504],
      [new TaskCancelledError('x'), 409],
      [new ShutdownError(), 503],
      [new SubmitIncompleteError('t', [undefined], new Error('down')), 503],
      [new HistoryFlushTimeoutError(['s'], 100), 503],
      [new SchedulerRequestError(0, 'TimeoutError', 'no answer'), 502],
      [new NotFoundException('gone'), 404],
      [new Error('unexpected'), undefined],
      ['not an error', undefined],
    ];
    for (const [error, status] of cases) {
      const answer = httpErrorOf(error);
      expect([error, answer?.status]).toEqual([error, status]);
      if (answer) expect(answer.body.error.name).toBe((error as Error).name);
    }
  });

  it('has a status for every exported error but the ones listed, with a reason, as having none', () => {
    expect(exportedErrors.length).toBeGreaterThan(40);
    const names = exportedErrors.map(([name]) => name);
    expect(Object.keys(NO_STATUS).filter((name) => !names.includes(name))).toEqual([]);
    const without = exportedErrors.filter(([, kind]) => statusOf(kind) === undefined).map(([name]) => name);
    expect(without.sort()).toEqual(Object.keys(NO_STATUS).sort());
  });

  it('is the status each error\'s section of docs/errors.md gives, and its table\'s', () => {
    const page = readFileSync(join(__dirname, '../../../../docs/errors.md'), 'utf8');
    const documented = new Map(
      page.split(/^## /m).slice(1).map((section) => {
        const http = /^- \*\*HTTP:\*\* (\d{3})\b/m.exec(section);
        return [section.slice(0, section.indexOf('\n')), http ? Number(http[1]) : undefined];
      }),
    );
    const table = new Map<string, number>();
    for (const row of page.matchAll(/^\| (\d{3}) \| (.*) \|$/gm)) for (const name of row[2].matchAll(/`(\w+)`/g)) table.set(name[1], Number(row[1]));
    for (const [name, kind] of exportedErrors) {
      expect([name, documented.get(name)]).toEqual([name, statusOf(kind)]);
      expect([name, table.get(name)]).toEqual([name, statusOf(kind)]);
    }
  });
});
