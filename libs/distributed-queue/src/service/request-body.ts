import type { IncomingMessage } from 'http';

/** A request as Express, Fastify or plain Node hand it to a middleware. */
export type IncomingRequest = IncomingMessage & { rawBody?: Buffer; body?: unknown };

/** Room for a request's own fields around the payloads (a delivery's type, id and numbers; a call's op...). */
export const REQUEST_OVERHEAD_BYTES = 64 * 1024;
/** The default of `service.maxRequestBytes` and `scheduler.maxRequestBytes` (at least one largest task). */
export const DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/** The default of `maxPayloadBytes` (module option). */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

/** Thrown when a request body is larger than allowed. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the body is larger than ${limit} bytes`);
  }
}

/** Reads a request's stream, refusing more than `maxBytes` (as soon as more arrives, and when it says so). */
export async function readBody(req: IncomingRequest, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) throw new BodyTooLargeError(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new BodyTooLargeError(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * The body of a request exactly as it was sent, whoever read it first: Nest's `rawBody` when the app
 * was created with `{ rawBody: true }`; the stream itself when no body parser read it (Fastify, or a
 * content type the parser skipped); else the parsed JSON written out again, which gives back the text
 * the scheduler signed (it signs `JSON.stringify` output, which parsing and writing out keep as it is).
 */
export async function readRawBody(req: IncomingRequest, maxBytes: number): Promise<string> {
  if (Buffer.isBuffer(req.rawBody)) {
    // NOTE: a body read by the application's own parser (rawBody: true) is held to the same limit.
    if (req.rawBody.length > maxBytes) throw new BodyTooLargeError(maxBytes);
    return req.rawBody.toString('utf8');
  }
  if (!req.readableEnded) return (await readBody(req, maxBytes)).toString('utf8');
  if (typeof req.body === 'string') return req.body;
  if (Buffer.isBuffer(req.body)) return req.body.toString('utf8');
  return JSON.stringify(req.body ?? null);
}
