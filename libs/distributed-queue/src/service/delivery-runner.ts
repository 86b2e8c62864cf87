import { ShutdownError, TaskTimeoutError } from '../errors';
import type { HandlerRun } from '../events/task-event-bus';
import type { TaskHandler } from '../interfaces';
import { UnkeptTask } from '../runtime/active-task';
import { callHandler, runController } from '../runtime/handler-call';
import { keptError, stackOf } from '../runtime/error-stack';
import { DEFAULT_TOLERANCE_MS, type DeliveryBatch, type DeliveryBody, type DeliveryResult } from './delivery-signature';
import { authenticate, type ReplayGuard } from './replay-guard';

/** The handler of a type in this application, and its time budget. */
export interface DeliveryTarget {
  handler: TaskHandler;
  timeoutMs: number;
}

/** A refused request: status and JSON body; nothing ran. */
export interface DeliveryRefusal {
  status: 400 | 401;
  body: { ok: false; error: { name: string; message: string } };
}

const refuse = (status: DeliveryRefusal['status'], name: string, message: string): DeliveryRefusal => ({ status, body: { ok: false, error: { name, message } } });

const isTask = (d: Partial<DeliveryBody> | null): d is DeliveryBody =>
  !!d && typeof d.type === 'string' && typeof d.id === 'string' && Number.isInteger(d.attempt) && typeof d.dueAt === 'number';

/**
 * Runs the scheduler's deliveries in a client application. `accept` checks the signature, the timestamp,
 * that the delivery id is new and the body's shape (else a refusal: nothing runs); `runAll` then runs each
 * task's handler with the same `Task` and `AbortSignal` as plugin mode, all at once, and reports each as it
 * ends: 200 with the result; 500 with the error; 504 past its `timeoutMs` (the signal is aborted); 404 for
 * a type this application has no worker for. The scheduler counts all but 200 as a failed attempt.
 */
/** The result status of a delivery cut by the instance's shutdown: handed back, no attempt counted. */
export const SHUTDOWN_STATUS = 503;

export class DeliveryRunner {
  /** The deliveries running now: each ends at once with `ShutdownError` when this instance stops. */
  private readonly running = new Set<(error: ShutdownError) => void>();

  constructor(
    private readonly secret: string,
    private readonly targets: (type: string) => DeliveryTarget | undefined,
    private readonly replay: ReplayGuard,
    private readonly toleranceMs = DEFAULT_TOLERANCE_MS,
    /** Told of each handler run as it ends (its outcome as answered: a run past its timeout failed). */
    private readonly onRun: (run: HandlerRun) => void = () => undefined,
  ) {}

  /** Checks a request (`rawBody` exactly as received): its tasks, or why it is refused. */
  async accept(headers: Record<string, string | string[] | undefined>, rawBody: string): Promise<DeliveryBody[] | DeliveryRefusal> {
    const refused = await authenticate(this.secret, this.replay, headers, rawBody, this.toleranceMs);
    if (refused) return refuse(401, 'Unauthorized', refused);
    let batch: Partial<DeliveryBatch> | null;
    try {
      batch = JSON.parse(rawBody) as Partial<DeliveryBatch> | null;
    } catch {
      return refuse(400, 'BadRequest', 'the body is not JSON');
    }
    const deliveries = batch?.deliveries;
    if (!Array.isArray(deliveries) || !deliveries.every(isTask)) return refuse(400, 'BadRequest', 'expected { deliveries: [{ type, id, attempt, dueAt, payload, timeoutMs }] }');
    return deliveries;
  }

  /** Runs every task; `report` gets each one's result as it ends. Resolves when all have ended. */
  runAll(deliveries: DeliveryBody[], report: (result: DeliveryResult) => void): Promise<void> {
    return Promise.all(deliveries.map((delivery, i) => this.runOne(delivery, i).then(report))).then(() => undefined);
  }

  private runOne(body: DeliveryBody, i: number): Promise<DeliveryResult> {
    const target = this.targets(body.type);
    if (!target) return Promise.resolve({ i, status: 404, error: { name: 'UnknownTaskType', message: `no @TaskWorker for "${body.type}" in this application` } });
    const task = new UnkeptTask(body.id, body.type, body.payload, body.attempt, body.dueAt);
    const timeoutMs = Math.min(target.timeoutMs, body.timeoutMs > 0 ? body.timeoutMs : target.timeoutMs);
    const controller = runController(target.handler);
    const startedAt = Date.now();
    const started = performance.now();
    return new Promise<DeliveryResult>((resolve) => {
      let answered = false;
      const end = (result: DeliveryResult): void => {
        clearTimeout(timer);
        this.running.delete(stop);
        if (answered) return;
        answered = true;
        resolve(result);
        // NOTE: a run cut by this instance's shutdown is handed back, neither completed nor failed.
        if (result.status !== SHUTDOWN_STATUS) this.onRun({ type: task.type, ok: result.status === 200, dueAt: task.dueAt, startedAt, durationMs: performance.now() - started });
      };
      const timer = setTimeout(() => {
        const error = new TaskTimeoutError(timeoutMs);
        controller?.abort(error);
        end({ i, status: 504, error: { name: error.name, message: error.message } });
      }, timeoutMs);
      const stop = (error: ShutdownError): void => {
        controller?.abort(error);
        end({ i, status: SHUTDOWN_STATUS, error: { name: error.name, message: error.message } });
      };
      this.running.add(stop);
      callHandler(target.handler, task, controller, (error, result) => {
        end(error ? { i, status: 500, error: { ...keptError(error), stack: stackOf(error) } } : { i, status: 200, result });
      });
    });
  }

  /**
   * The instance stops and its grace is over: every running handler is aborted with `ShutdownError` and its
   * delivery answered at once (`SHUTDOWN_STATUS`: the scheduler hands the task back without counting the
   * attempt), so that the HTTP server can close. Returns how many were running.
   */
  abortAll(): number {
    const running = [...this.running];
    const error = new ShutdownError();
    running.forEach((stop) => stop(error));
    return running.length;
  }
}
