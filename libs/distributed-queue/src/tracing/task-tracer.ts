import type { Attributes, Span, Tracer } from '@opentelemetry/api';
import type { Task, TaskHandler } from '../interfaces';
import type { ResolvedTracingOptions } from '../options/resolve-observability';
import { takesSignal, toError } from '../runtime/handler-call';
import { loadOtelApi, type Otel } from './otel-api';
import { contextOf, traceparentOf } from './traceparent';

/** `messaging.system` of every span. */
const SYSTEM = 'nestjs-distributed-queue';

/** The attributes every span of a type has (OpenTelemetry messaging semantic conventions). */
function messaging(type: string, operation: 'send' | 'process', name: string): Attributes {
  return {
    'messaging.system': SYSTEM,
    'messaging.destination.name': type,
    'messaging.operation.type': operation,
    'messaging.operation.name': name,
  };
}

/**
 * OpenTelemetry spans of submits and handler runs (module option `tracing`). A submit runs in a
 * `<type> publish` span (PRODUCER) whose W3C traceparent is stored with its tasks; each handler run is a
 * `<type> process` span (CONSUMER) whose parent is that stored context, so a run joins its submitter's
 * trace in any process. Provided under `TASK_TRACER`: null when tracing is off.
 */
export class TaskTracer {
  // NOTE: private, so that the emitted typings never name @opentelemetry/api (applications without it compile).
  private readonly otel: Otel;
  private readonly tracer: Tracer;

  /** @throws InvalidOptionsError without `@opentelemetry/api` */
  constructor(tracerName: string) {
    this.otel = loadOtelApi();
    this.tracer = this.otel.trace.getTracer(tracerName);
  }

  /**
   * Runs `send` in a `<type> publish` span, a child of the active context, giving it the span's traceparent
   * to store with the `count` tasks it writes; the span ends with `send`'s outcome.
   */
  async publish<R extends { id: string }>(type: string, count: number, send: (traceparent: string | undefined) => Promise<R[]>): Promise<R[]> {
    const { otel } = this;
    const attributes = messaging(type, 'send', 'publish');
    if (count !== 1) attributes['messaging.batch.message_count'] = count;
    const span = this.tracer.startSpan(`${type} publish`, { kind: otel.SpanKind.PRODUCER, attributes });
    const ctx = otel.trace.setSpan(otel.context.active(), span);
    try {
      const results = await otel.context.with(ctx, () => send(traceparentOf(otel, ctx)));
      if (results.length === 1) span.setAttribute('messaging.message.id', results[0].id);
      this.succeed(span);
      return results;
    } catch (error) {
      this.fail(span, error);
      throw error;
    }
  }

  /** The handler with each run in a `<type> process` span (the handler runs inside it: its spans nest). */
  wrap(type: string, handler: TaskHandler): TaskHandler {
    // NOTE: a handler that cannot see its signal stays so: its runs need no abort controller (takesSignal).
    if (!takesSignal(handler)) return { handle: (task: Task) => this.run(type, handler, task) };
    return { handle: (task, signal) => this.run(type, handler, task, signal) };
  }

  /**
   * One run in its span; the span ends as the handler settles (a return, a throw, or its promise).
   * NOTE: a synchronous handler stays synchronous (no promise added): the engines call it on their hot path.
   */
  private run(type: string, handler: TaskHandler, task: Task, signal?: AbortSignal): unknown {
    const { otel } = this;
    const parent = task.traceContext ? contextOf(otel, task.traceContext) : otel.ROOT_CONTEXT;
    const attributes = messaging(type, 'process', 'process');
    attributes['messaging.message.id'] = task.id;
    attributes['messaging.distributed_queue.attempt'] = task.attempt;
    if (task.key !== undefined) attributes['messaging.distributed_queue.key'] = task.key;
    const span = this.tracer.startSpan(`${type} process`, { kind: otel.SpanKind.CONSUMER, attributes }, parent);
    let outcome: unknown;
    try {
      outcome = otel.context.with(otel.trace.setSpan(parent, span), () => handler.handle(task, signal!));
    } catch (error) {
      this.fail(span, error);
      throw error;
    }
    if (outcome && typeof (outcome as PromiseLike<unknown>).then === 'function') {
      return (outcome as PromiseLike<unknown>).then(
        (value) => {
          this.succeed(span);
          return value;
        },
        (error: unknown) => {
          this.fail(span, error);
          throw error;
        },
      );
    }
    this.succeed(span);
    return outcome;
  }

  private succeed(span: Span): void {
    span.setStatus({ code: this.otel.SpanStatusCode.OK });
    span.end();
  }

  private fail(span: Span, thrown: unknown): void {
    const error = toError(thrown);
    span.recordException(error);
    span.setStatus({ code: this.otel.SpanStatusCode.ERROR, message: error.message });
    span.end();
  }
}

/** The tracer of the `tracing` option: null when it is off (nothing loaded). @throws InvalidOptionsError without `@opentelemetry/api` */
export function createTaskTracer(options: ResolvedTracingOptions | null): TaskTracer | null {
  return options ? new TaskTracer(options.tracerName) : null;
}
