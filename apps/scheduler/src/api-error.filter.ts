import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import { httpErrorOf } from 'nestjs-distributed-queue';

interface Reply {
  status(code: number): Reply;
  json(body: unknown): unknown;
}

/** An error of the body parser (http-errors): its status, e.g. 413 with the limit, 400 for JSON it cannot parse. */
interface ParserError {
  status: number;
  expose: boolean;
  type?: string;
  limit?: number;
  message: string;
}

const isParserError = (error: unknown): error is ParserError =>
  error instanceof Error && typeof (error as Partial<ParserError>).status === 'number' && (error as Partial<ParserError>).expose === true;

function parserErrorBody(error: ParserError): { error: { name: string; message: string } } {
  if (error.type === 'entity.too.large') return { error: { name: 'PayloadTooLargeError', message: `the request body is larger than ${error.limit} bytes (SCHEDULER_MAX_REQUEST_BYTES)` } };
  return { error: { name: 'BadRequest', message: error.message } };
}

/**
 * Every API error as `{ error: { name, message } }`: 400 bad input, 401, 404 unknown type, 413 a body over
 * `SCHEDULER_MAX_REQUEST_BYTES`; else 500 (logged, no details).
 */
@Catch()
export class ApiErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('SchedulerApi');

  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<Reply>();
    if (isParserError(error)) {
      reply.status(error.status).json(parserErrorBody(error));
      return;
    }
    const known = httpErrorOf(error);
    if (known) {
      reply.status(known.status).json(known.body);
      return;
    }
    this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    reply.status(500).json({ error: { name: 'InternalError', message: 'internal error (logged by the scheduler)' } });
  }
}
