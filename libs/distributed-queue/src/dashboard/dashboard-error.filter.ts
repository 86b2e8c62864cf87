import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import { httpErrorOf } from '../errors';
import { SECURITY_HEADERS } from './dashboard-page';
import { DashboardClosing } from './dashboard-closing';

/** The reply object of Express and Fastify alike: both have these four. */
export interface HttpReply {
  status(code: number): HttpReply;
  header(name: string, value: string | string[]): HttpReply;
  type(contentType: string): HttpReply;
  send(body?: unknown): unknown;
}

/** Sends `body` as JSON with the dashboard's headers. */
export function sendJson(reply: HttpReply, status: number, body: unknown): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value);
  reply.status(status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/**
 * Answers every dashboard error as `{ error: { name, message } }`: 400 for bad input, 401, 403 (CSRF), 404
 * (unknown type or task), 409 (a queue in use); anything unexpected is a 500 without details (logged).
 */
@Catch()
export class DashboardErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('DistributedQueueDashboard');

  constructor(private readonly closing: DashboardClosing) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<HttpReply>();
    this.closing.mark(reply);
    const known = httpErrorOf(error);
    if (known) {
      sendJson(reply, known.status, known.body);
      return;
    }
    this.logger.error(`dashboard request failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    sendJson(reply, 500, { error: { name: 'InternalError', message: 'the request failed; see the application log' } });
  }
}
