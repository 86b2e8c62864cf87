import { CanActivate, ExecutionContext, ForbiddenException, Inject, Injectable, OnModuleInit, SetMetadata, UnauthorizedException } from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import { timingSafeEqual } from 'crypto';
import { DashboardSessions } from './dashboard-sessions';
import type { ResolvedDashboardOptions } from './dashboard-options';
import { parseCookies } from './http-cookies';

/** Injection token of the resolved dashboard options. */
export const DASHBOARD_OPTIONS = Symbol('DASHBOARD_OPTIONS');
/** The HttpOnly cookie a browser signed in with the token carries: its session's id (see DashboardSessions). */
export const SESSION_COOKIE = 'dq_dash';
/** The cookie the page reads and echoes in `x-csrf-token` on every POST (double submit). */
export const CSRF_COOKIE = 'dq_csrf';
export const CSRF_HEADER = 'x-csrf-token';

const SIGN_IN_ROUTE = 'distributed-queue:dashboard-sign-in';
/** Marks the sign-in route: it checks the token itself. */
export const SignInRoute = (): MethodDecorator => SetMetadata(SIGN_IN_ROUTE, true);

/** Compares secrets in constant time. */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

interface DashboardRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * Lets a request through when the application's guard accepts it, or when it carries the token (Bearer
 * header) or the cookie of a live session (signed in with the token, not expired, not signed out); else 401. Without a token or a guard configured, every request gets 401.
 * A POST that is not authenticated by a Bearer header must also carry the CSRF header matching the CSRF
 * cookie (403 otherwise): a cross-site form or script cannot read the cookie to echo it.
 */
@Injectable()
export class DashboardAuthGuard implements CanActivate, OnModuleInit {
  private appGuard?: CanActivate;

  constructor(
    @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    private readonly moduleRef: ModuleRef,
    private readonly reflector: Reflector,
    private readonly sessions: DashboardSessions,
  ) {}

  async onModuleInit(): Promise<void> {
    const guard = this.options.guard;
    if (typeof guard === 'function') {
      try {
        this.appGuard = this.moduleRef.get(guard, { strict: false });
      } catch {
        // NOTE: not a provider anywhere: instantiated here, its dependencies resolved from the application.
        this.appGuard = await this.moduleRef.create(guard);
      }
    } else if (guard) {
      this.appGuard = guard;
    }
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.get<boolean>(SIGN_IN_ROUTE, context.getHandler())) return true;
    const request = context.switchToHttp().getRequest<DashboardRequest>();
    const bearer = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
    const cookies = parseCookies(request.headers.cookie);
    let byBearer = false;
    if (this.appGuard) {
      if (!(await this.appGuard.canActivate(context))) throw new UnauthorizedException('the dashboard refused this request');
    } else if (this.options.token) {
      byBearer = sameSecret(bearer, this.options.token);
      if (!byBearer && !(await this.sessions.isValid(cookies[SESSION_COOKIE]))) {
        throw new UnauthorizedException(`sign in at ${this.options.path}/login?token=... or send Authorization: Bearer <token>`);
      }
    } else {
      throw new UnauthorizedException('the dashboard has no authentication configured (set its token or guard option)');
    }
    if (request.method !== 'GET' && request.method !== 'HEAD' && !byBearer) {
      const header = request.headers[CSRF_HEADER];
      const expected = cookies[CSRF_COOKIE];
      if (!expected || typeof header !== 'string' || !sameSecret(header, expected)) {
        throw new ForbiddenException(`missing or wrong ${CSRF_HEADER} header (it must echo the ${CSRF_COOKIE} cookie)`);
      }
    }
    return true;
  }
}
