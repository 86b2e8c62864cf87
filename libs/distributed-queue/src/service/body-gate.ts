import type { HttpAdapterHost } from '@nestjs/core';
import type { ServerResponse } from 'http';
import { BodyTooLargeError, readBody, type IncomingRequest } from './request-body';

type Next = (error?: unknown) => void;

/**
 * Reads the body of `POST <path>` (service mode's own routes: an instance's callback, the scheduler's client
 * path) before any body parser of the application, up to `maxBytes` (413 beyond, in the library's
 * `{ ok: false, error }` shape), into `req.rawBody`. A parser registered later finds the request read and
 * skips it, so the application's global body limit (Express's 100 kB by default, or whatever it sets) does
 * not apply to these routes. Express only (registered while the module is created, before Nest adds its
 * parsers at init): with another adapter it does nothing and returns false; the route then reads the
 * stream itself when no parser read it first (Fastify runs middleware before parsing).
 */
export function installBodyGate(adapterHost: HttpAdapterHost | undefined, path: string, maxBytes: number): boolean {
  const adapter = adapterHost?.httpAdapter;
  if (!adapter || adapter.getType?.() !== 'express') return false;
  adapter.use((req: IncomingRequest, res: ServerResponse, next: Next) => {
    if (req.method !== 'POST' || req.readableEnded || Buffer.isBuffer(req.rawBody) || pathOf(req.url) !== path) return next();
    readBody(req, maxBytes).then(
      (body) => {
        req.rawBody = body;
        next();
      },
      (error: Error) => {
        const [status, name] = error instanceof BodyTooLargeError ? [413, 'PayloadTooLargeError'] : [400, 'BadRequest'];
        res.statusCode = status;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ ok: false, error: { name, message: error.message } }));
      },
    );
  });
  return true;
}

function pathOf(url: string | undefined): string {
  const end = url?.indexOf('?') ?? -1;
  return end >= 0 ? url!.slice(0, end) : (url ?? '');
}
