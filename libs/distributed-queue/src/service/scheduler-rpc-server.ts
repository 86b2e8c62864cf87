import type { ServerResponse } from 'http';
import type { DelayQueueStore } from '../delay/delay-queue.store';
import { DistributedQueueError, InvalidArgumentError, TypeOwnedError } from '../errors';
import { assertTaskType } from '../options/resolve-options';
import { MAX_PRIORITY } from '../options/resolve-limits';
import { httpErrorOf } from '../errors/http-status';
import { authenticate, type ReplayGuard } from './replay-guard';
import { BodyTooLargeError, DEFAULT_MAX_REQUEST_BYTES, readRawBody, type IncomingRequest } from './request-body';
import { RPC_OPS, type SchedulerRpc } from './scheduler-rpc';
import { closeAfterAnswer } from './closing-answer';
import type { ServiceRegistry } from './service-registry';

interface Answer {
  status: number;
  body: { ok: true; result: unknown } | { ok: false; error: { name: string; message: string; [field: string]: unknown } };
}

const failure = (status: number, name: string, message: string): Answer => ({ status, body: { ok: false, error: { name, message } } });

/** A library error's answer, with the fields the application needs to throw the same error (`SchedulerRpcClient`). */
function errorAnswer(status: number, error: Error): Answer {
  const answer = failure(status, error.name, error.message);
  if (error instanceof TypeOwnedError && !answer.body.ok) Object.assign(answer.body.error, { type: error.type, owner: error.owner, app: error.app });
  return answer;
}

const isDue = (due: unknown): boolean =>
  !!due && typeof due === 'object' && (Number.isFinite((due as { delay?: number }).delay) || Number.isFinite((due as { at?: number }).at));

const isGroup = (g: unknown): boolean => g === undefined || (typeof g === 'string' && g.length > 0 && g.length <= 256);
const isPriority = (p: unknown): boolean => p === undefined || (Number.isInteger(p) && (p as number) >= 0 && (p as number) <= MAX_PRIORITY);

/** Throws `InvalidArgumentError` for a call whose fields are not what its op takes. */
function checkCall(call: SchedulerRpc): void {
  if ('type' in call) assertTaskType(call.type);
  if ('id' in call && (typeof call.id !== 'string' || call.id.length === 0)) throw new InvalidArgumentError('id', 'expected a task id');
  if (call.op === 'reschedule' && !isDue(call.due)) throw new InvalidArgumentError('due', 'expected { delay } or { at }');
  if (call.op === 'submit') {
    const ok = Array.isArray(call.tasks) && call.tasks.every((t) => t && typeof t.id === 'string' && typeof t.payload === 'string' && isDue(t.due) && isPriority(t.priority) && isGroup(t.group) && (t.deadline === undefined || isDue(t.deadline)));
    if (!ok || typeof call.requestId !== 'string') throw new InvalidArgumentError('tasks', 'expected [{ id, due, payload, priority? }] and a requestId');
  }
}

/**
 * The scheduler's side of `service.url`: verifies each call like a delivery (HMAC with the shared secret,
 * timestamp within 5 minutes, request id not seen before: else 401), then registers, submits, cancels,
 * reschedules or reads a task on the application's behalf with the same scripts plugin mode runs.
 */
export class SchedulerRpcServer {
  /** Set once the application shuts down: answers then close their connection (see `closeAfterAnswer`). */
  closing = false;

  constructor(
    private readonly secret: string,
    private readonly registry: ServiceRegistry,
    private readonly store: DelayQueueStore,
    private readonly replay: ReplayGuard,
    /** The largest call body taken (`scheduler.maxRequestBytes`): 413 beyond. */
    private readonly maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES,
  ) {}

  /** Answers one call (the client path's POST handler). */
  async handle(req: IncomingRequest, res: ServerResponse): Promise<void> {
    const answer = await this.answer(req).catch((error: Error) => {
      if (error instanceof BodyTooLargeError) return failure(413, 'PayloadTooLargeError', error.message);
      const known = httpErrorOf(error);
      if (known) return errorAnswer(known.status, error);
      return failure(error instanceof DistributedQueueError ? 400 : 503, error.name, error.message);
    });
    res.statusCode = answer.status;
    res.setHeader('content-type', 'application/json');
    if (this.closing) closeAfterAnswer(res);
    res.end(JSON.stringify(answer.body));
  }

  private async answer(req: IncomingRequest): Promise<Answer> {
    const raw = await readRawBody(req, this.maxRequestBytes);
    const refused = await authenticate(this.secret, this.replay, req.headers, raw);
    if (refused) return failure(401, 'Unauthorized', refused);
    let call: SchedulerRpc;
    try {
      call = JSON.parse(raw) as SchedulerRpc;
    } catch {
      return failure(400, 'BadRequest', 'the body is not JSON');
    }
    if (!call || !RPC_OPS.includes(call.op)) return failure(400, 'BadRequest', `unknown op (known: ${RPC_OPS.join(', ')})`);
    checkCall(call);
    return { status: 200, body: { ok: true, result: (await this.run(call)) ?? null } };
  }

  private run(call: SchedulerRpc): Promise<unknown> {
    switch (call.op) {
      case 'register':
        return this.registry.register(call.app, call.instance, call.types, call.ttlMs);
      case 'leave':
        return this.registry.leave(call.app, call.instanceId);
      case 'submit':
        return this.store.submit(call.type, call.tasks, call.requestId);
      case 'cancel':
        return this.store.cancel(call.type, call.id);
      case 'reschedule':
        return this.store.reschedule(call.type, call.id, call.due);
      case 'get':
        return this.store.get(call.type, call.id);
    }
  }
}
