import { CanActivate, ExecutionContext, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'crypto';
import { SCHEDULER_CONFIG, type SchedulerConfig } from './scheduler.config';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** The HTTP API's authentication: `Authorization: Bearer <one of SCHEDULER_API_TOKENS>`, compared in constant time. */
@Injectable()
export class ApiTokenGuard implements CanActivate {
  private readonly tokens: Buffer[];

  constructor(@Inject(SCHEDULER_CONFIG) config: SchedulerConfig) {
    this.tokens = config.apiTokens.map(digest);
  }

  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers.authorization ?? '';
    const given = /^Bearer (\S+)$/.exec(header);
    // NOTE: every token is compared (no early exit), on digests of equal length.
    const match = given ? this.tokens.map((t) => timingSafeEqual(t, digest(given[1]))).includes(true) : false;
    if (!match) throw new UnauthorizedException('a valid "Authorization: Bearer <token>" header is required');
    return true;
  }
}
