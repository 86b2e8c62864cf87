import { TaskTimeoutError } from '../errors';
import type { Task, TaskHandler } from '../interfaces';
import { callHandler } from '../runtime/handler-call';
import { DEFAULT_TOLERANCE_MS, verifyDelivery, type DeliveryBody } from './delivery-signature';

/** Remembers delivery ids for a while: `firstSeen` is true only the first time an id is offered. */
export interface ReplayGuard {
  firstSeen(delivery: string, forMs: number): Promise<boolean>;
}

/** The handler of a type in this application, and its time budget. */
export interface DeliveryTarget {
  handler: TaskHandler;
  timeoutMs: number;
}

/** An HTTP answer: status and JSON body. */
export interface DeliveryAnswer {
  status: number;
  body: { ok: true; result?: unknown } | { ok: false; error: { name: string; message: string } };
}

const refuse = (status: number, name: string, message: string): DeliveryAnswer => ({ status, body: { ok: false, error: { name, message } } });

/**
 * Runs one delivery from the scheduler in a client application: checks the signature, the timestamp and
 * that the delivery id is new (else 401, nothing runs), then runs the type's handler with the same `Task`
 * and `AbortSignal` as plugin mode. 200 on success; 500 with the error when the handler fails; 504 when it
 * runs past its `timeoutMs` (the signal is aborted): the scheduler counts both as a failed attempt.
 */
export class DeliveryRunner {
  constructor(
    private readonly secret: string,
    private readonly targets: (type: string) => DeliveryTarget | undefined,
    private readonly replay: ReplayGuard,
    private readonly toleranceMs = DEFAULT_TOLERANCE_MS,
  ) {}

  /** Answers a delivery: `rawBody` is the request body exactly as received. */
  async run(headers: Record<string, string | string[] | undefined>, rawBody: string): Promise<DeliveryAnswer> {
    const verdict = verifyDelivery(this.secret, headers, rawBody, Date.now(), this.toleranceMs);
    if (!verdict.ok) return refuse(401, 'Unauthorized', verdict.reason);
    // NOTE: remembered for twice the tolerance: past it the timestamp alone refuses the request.
    if (!(await this.replay.firstSeen(verdict.delivery, 2 * this.toleranceMs))) return refuse(401, 'Unauthorized', 'replayed delivery');
    let body: DeliveryBody;
    try {
      body = JSON.parse(rawBody) as DeliveryBody;
    } catch {
      return refuse(400, 'BadRequest', 'the body is not JSON');
    }
    const target = this.targets(body.type);
    if (!target) return refuse(404, 'UnknownTaskType', `no @TaskWorker for "${String(body.type)}" in this application`);
    const task: Task = { id: body.id, type: body.type, payload: body.payload, attempt: body.attempt, dueAt: body.dueAt };
    return this.runHandler(target, task, Math.min(target.timeoutMs, body.timeoutMs || target.timeoutMs));
  }

  private runHandler(target: DeliveryTarget, task: Task, timeoutMs: number): Promise<DeliveryAnswer> {
    const controller = new AbortController();
    return new Promise<DeliveryAnswer>((resolve) => {
      const timer = setTimeout(() => {
        const error = new TaskTimeoutError(timeoutMs);
        controller.abort(error);
        resolve(refuse(504, error.name, error.message));
      }, timeoutMs);
      callHandler(target.handler, task, controller.signal, (error, result) => {
        clearTimeout(timer);
        resolve(error ? refuse(500, error.name, error.message) : { status: 200, body: { ok: true, result } });
      });
    });
  }
}
