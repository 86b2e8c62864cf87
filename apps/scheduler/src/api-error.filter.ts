import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import { httpErrorOf } from 'nestjs-distributed-queue';

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
    const known = httpErrorOf(error);
    if (known) {
      reply.status(known.status).json(known.body);
      return;
    }
    this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    reply.status(500).json({ error: { name: 'InternalError', message: 'internal error (logged by the scheduler)' } });
  }
}
