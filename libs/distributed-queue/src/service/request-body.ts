import type { IncomingMessage } from 'http';

/** A request as Express, Fastify or plain Node hand it to a middleware. */
export type IncomingRequest = IncomingMessage & { rawBody?: Buffer; body?: unknown };

/** Thrown when a request body is larger than allowed. */
export class BodyTooLargeError extends Error {}

/**
 * The body of a request exactly as it was sent, whoever read it first: Nest's `rawBody` when the app
 * was created with `{ rawBody: true }`; the stream itself when no body parser read it (Fastify, or a
 * content type the parser skipped); else the parsed JSON written out again, which gives back the text
 * the scheduler signed (it signs `JSON.stringify` output, which parsing and writing out keep as it is).
 */
export async function readRawBody(req: IncomingRequest, maxBytes: number): Promise<string> {
  if (Buffer.isBuffer(req.rawBody)) return req.rawBody.toString('utf8');
  if (!req.readableEnded) {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw new BodyTooLargeError(`the body is larger than ${maxBytes} bytes`);
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  }
  if (typeof req.body === 'string') return req.body;
  if (Buffer.isBuffer(req.body)) return req.body.toString('utf8');
  return JSON.stringify(req.body ?? null);
}
