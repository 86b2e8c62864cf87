import { NotFoundException } from '@nestjs/common';
import { DurabilityError } from './durability.error';
import { InvalidSubmitOptionsError, UnknownTaskTypeError } from './distributed-queue.error';
import { httpErrorOf } from './http-status';
import { RedisOutOfMemoryError } from './redis-memory.error';
import { RedisUnavailableError } from './redis-unavailable.error';

describe('httpErrorOf', () => {
  it('answers the library\'s errors with their status and name, Nest\'s with theirs, anything else not at all', () => {
    const cases: [unknown, number | undefined][] = [
      [new UnknownTaskTypeError('t'), 404],
      [new InvalidSubmitOptionsError('delay', 'bad'), 400],
      [new RedisUnavailableError('dq:x:commands', '127.0.0.1:1', true, 'no reply'), 503],
      [new DurabilityError(0, 1, 100, 3, 'no replica'), 503],
      [new RedisOutOfMemoryError('dq:x:commands', '127.0.0.1:1', 'OOM command not allowed'), 507],
      [new NotFoundException('gone'), 404],
      [new Error('unexpected'), undefined],
      ['not an error', undefined],
    ];
    for (const [error, status] of cases) {
      const answer = httpErrorOf(error);
      expect(answer?.status).toBe(status);
      if (answer) expect(answer.body.error.name).toBe((error as Error).name);
    }
  });
});
