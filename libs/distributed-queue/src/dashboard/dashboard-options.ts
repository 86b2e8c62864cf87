import type { CanActivate, Type } from '@nestjs/common';
import { InvalidOptionsError } from '../errors';
import { quote } from '../errors/quote';
import { didYouMean } from '../options/suggest';

/** Options of `DistributedQueueDashboardModule.forRoot`. Without `token` or `guard`, every request gets 401. */
export interface DashboardOptions {
  /** Where the dashboard is served (page, assets and admin API under it). @default '/queues' */
  path?: string;
  /**
   * A shared secret (at least 16 characters): API clients send `Authorization: Bearer <token>`; a browser
   * signs in once at `<path>/login?token=<token>`, which sets an HttpOnly, SameSite=Strict cookie naming
   * a new server-side session (see `sessionTtlMs`; `POST <path>/logout` ends it).
   */
  token?: string;
  /**
   * The application's own guard (a class Nest instantiates, or an instance), e.g. its session or role
   * check; a request it refuses gets 401. Used instead of `token`.
   */
  guard?: Type<CanActivate> | CanActivate;
  /** The page's title. @default 'Queues' */
  title?: string;
  /**
   * How long a browser's sign-in lasts (ms, 1 s to 30 days): the server refuses its session cookie after
   * that, whatever the browser keeps. Sessions live in Redis, shared by every instance on it.
   * @default 43200000 (12 h)
   */
  sessionTtlMs?: number;
}

/** Dashboard options with defaults applied. */
export interface ResolvedDashboardOptions {
  path: string;
  token?: string;
  guard?: Type<CanActivate> | CanActivate;
  title: string;
  sessionTtlMs: number;
}

const KEYS = ['path', 'token', 'guard', 'title', 'sessionTtlMs'];
/** The default and the largest session lifetime. */
const SESSION_TTL_MS = 12 * 3600_000;
const MAX_SESSION_TTL_MS = 30 * 24 * 3600_000;

/** Validates the options; throws `InvalidOptionsError` naming the bad one. */
export function resolveDashboardOptions(options: DashboardOptions = {}): ResolvedDashboardOptions {
  if (options === null || typeof options !== 'object') throw new InvalidOptionsError('dashboard', 'must be an object');
  for (const key of Object.keys(options)) {
    if (!KEYS.includes(key)) throw new InvalidOptionsError(`dashboard.${key}`, `unknown option${didYouMean(key, KEYS)} (known: ${KEYS.join(', ')})`);
  }
  const path = options.path ?? '/queues';
  if (typeof path !== 'string' || !/^\/[A-Za-z0-9._~\-/]*$/.test(path) || path.includes('//') || (path.length > 1 && path.endsWith('/'))) {
    throw new InvalidOptionsError('dashboard.path', "must be a path like '/queues' (letters, digits, . _ ~ - /; no trailing slash)");
  }
  if (options.token !== undefined && (typeof options.token !== 'string' || options.token.length < 16)) {
    throw new InvalidOptionsError('dashboard.token', 'must be a string of at least 16 characters');
  }
  const guard = options.guard;
  if (guard !== undefined && typeof guard !== 'function' && typeof (guard as CanActivate | null)?.canActivate !== 'function') {
    throw new InvalidOptionsError('dashboard.guard', 'must be a guard class or an object with canActivate()');
  }
  if (options.title !== undefined && (typeof options.title !== 'string' || options.title.length === 0)) {
    throw new InvalidOptionsError('dashboard.title', 'must be a non-empty string');
  }
  const sessionTtlMs = options.sessionTtlMs ?? SESSION_TTL_MS;
  if (typeof sessionTtlMs !== 'number' || !Number.isInteger(sessionTtlMs) || sessionTtlMs < 1000 || sessionTtlMs > MAX_SESSION_TTL_MS) {
    throw new InvalidOptionsError('dashboard.sessionTtlMs', `must be an integer number of ms from 1000 to ${MAX_SESSION_TTL_MS} (30 days), got ${quote(sessionTtlMs)}`);
  }
  return { path, token: options.token, guard, title: options.title ?? 'Queues', sessionTtlMs };
}
