import type { Context } from '@opentelemetry/api';
import type { Otel } from './otel-api';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The W3C `traceparent` of the span in `ctx`: what the registered propagator writes when it writes one,
 * else `00-<trace id>-<span id>-<flags>` from the span context; undefined without a valid span.
 */
export function traceparentOf(otel: Otel, ctx: Context): string | undefined {
  const spanContext = otel.trace.getSpanContext(ctx);
  if (!spanContext || !otel.trace.isSpanContextValid(spanContext)) return undefined;
  const carrier: Record<string, string> = {};
  otel.propagation.inject(ctx, carrier);
  if (carrier.traceparent) return carrier.traceparent;
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, '0');
  return `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
}

/**
 * The context of a stored `traceparent` (a remote parent), on the root context: through the registered
 * propagator when it reads it, else parsed here. The root context when it is unreadable.
 */
export function contextOf(otel: Otel, traceparent: string): Context {
  const root = otel.ROOT_CONTEXT;
  const extracted = otel.propagation.extract(root, { traceparent });
  if (otel.trace.getSpanContext(extracted)) return extracted;
  const match = TRACEPARENT.exec(traceparent);
  if (!match || match[1] === 'ff') return root;
  const spanContext = { traceId: match[2], spanId: match[3], traceFlags: parseInt(match[4], 16), isRemote: true };
  return otel.trace.isSpanContextValid(spanContext) ? otel.trace.setSpanContext(root, spanContext) : root;
}
