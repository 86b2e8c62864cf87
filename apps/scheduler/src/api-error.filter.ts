import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import {
  DistributedQueueError, InvalidArgumentError, InvalidPayloadError, InvalidSubmitOptionsError, InvalidTaskTypeError, UnknownTaskTypeError,
} from 'nestjs-distributed-queue';

const STATUS: [new (...args: never[]) => Error, number][] = [
  [UnknownTaskTypeError, 404],
  [InvalidArgumentError, 400],
  [InvalidSubmitOptionsError, 400],
  [InvalidTaskTypeError, 400],
  [InvalidPayloadError, 400],
];

interface Reply {
  status(code: number): Reply;
  json(body: unknown): unknown;
}

/** Every API error as `{ error: { name, message } }`: 400 bad input, 401, 404 unknown type; else 500 (logged, no details). */
@Catch()
export class ApiErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('SchedulerApi');

  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<Reply>();
    if (error instanceof HttpException) {
      reply.status(error.getStatus()).json({ error: { name: error.name, message: error.message } });
      return;
    }
    const known = error instanceof DistributedQueueError ? STATUS.find(([kind]) => error instanceof kind) : undefined;
    if (known && error instanceof Error) {
      reply.status(known[1]).json({ error: { name: error.name, message: error.message } });
      return;
    }
    this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    reply.status(500).json({ error: { name: 'InternalError', message: 'internal error (logged by the scheduler)' } });
  }
}
