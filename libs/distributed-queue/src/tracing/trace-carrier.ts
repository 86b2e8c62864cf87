/**
 * The trace context a task carries from its submit to its runs: a delay-queue payload is stored as
 * `^<traceparent>|<payload json>` when the submit ran under a span (JSON never begins with `^`), and as the
 * bare JSON otherwise. Everything that reads a stored payload goes through `splitTraceContext`.
 */
const MARK = '^';

/** The stored payload text: the JSON, prefixed with the W3C `traceparent` when there is one. */
export function withTraceContext(json: string, traceparent: string | undefined): string {
  return traceparent ? `${MARK}${traceparent}|${json}` : json;
}

/** Splits a stored payload text into its JSON and the `traceparent` it was submitted under. */
export function splitTraceContext(text: string): { json: string; traceContext?: string } {
  // NOTE: a flow node that waits for dependencies is stored with a leading `&` (see flow-plan.ts).
  if (text.charCodeAt(0) === 38 /* & */) text = text.slice(1);
  if (text.charCodeAt(0) !== 94 /* ^ */) return { json: text };
  const bar = text.indexOf('|');
  if (bar < 0) return { json: text };
  return { json: text.slice(bar + 1), traceContext: text.slice(1, bar) };
}
