import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { tap, type Observable } from 'rxjs';
import { DashboardClosing } from './dashboard-closing';
import type { HttpReply } from './dashboard-error.filter';
import { SECURITY_HEADERS } from './dashboard-page';

/**
 * Puts the dashboard's security headers (CSP, nosniff, X-Frame-Options, Referrer-Policy, `Cache-Control:
 * no-store`) on every answer of its routes before the handler runs: the admin API's JSON (task payloads
 * among it) then never lands in a browser or proxy cache and is never sniffed or framed. The page, assets
 * and errors set them too (an asset overrides Cache-Control with its own).
 */
@Injectable()
export class DashboardHeadersInterceptor implements NestInterceptor {
  constructor(private readonly closing: DashboardClosing) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const reply = context.switchToHttp().getResponse<HttpReply>();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value);
    // NOTE: after the handler, before the answer is written: the application may have begun to shut down.
    return next.handle().pipe(tap(() => this.closing.mark(reply)));
  }
}
