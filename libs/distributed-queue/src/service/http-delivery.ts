import { randomBytes } from 'crypto';
import { DeliveryFailedError, NoLiveInstanceError } from '../errors';
import type { Task, TaskHandler } from '../interfaces';
import { signDelivery, type DeliveryBody } from './delivery-signature';
import type { ServiceInstance } from './service-registry';

/** FNV-1a of a string: spreads task ids over instances the same way in every replica. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The instance that gets attempt `attempt` of task `id`: the next attempt goes to the next instance. */
export function pickInstance<T>(instances: readonly T[], id: string, attempt: number): T | undefined {
  return instances.length === 0 ? undefined : instances[(hash(id) + attempt) % instances.length];
}

function errorText(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { name?: string; message?: string } };
    if (body.error?.name) return `${body.error.name}: ${body.error.message ?? ''}`;
  } catch {
    // not the runner's JSON: say what came back
  }
  return text.slice(0, 200) || 'no body';
}

/**
 * The scheduler's handler of one registered type: POSTs each due task, signed, to one live instance of the
 * owning application. 2xx: done (the answer's `result` is the task's result). Any other status, no answer
 * within `timeoutMs` + grace, or a connection error throws `DeliveryFailedError`: a failed attempt.
 */
export class HttpDelivery implements TaskHandler {
  constructor(
    private readonly app: string,
    private readonly secret: string,
    /** The handler's own budget, sent with the task. */
    private readonly timeoutMs: number,
    private readonly instances: () => readonly ServiceInstance[],
  ) {}

  async handle(task: Task, signal: AbortSignal): Promise<unknown> {
    const instance = pickInstance(this.instances(), task.id, task.attempt);
    if (!instance) throw new NoLiveInstanceError(this.app);
    const body: DeliveryBody = { type: task.type, id: task.id, attempt: task.attempt, dueAt: task.dueAt, payload: task.payload, timeoutMs: this.timeoutMs };
    const text = JSON.stringify(body);
    const delivery = `${task.type}:${task.id}:${task.attempt}:${randomBytes(6).toString('hex')}`;
    let response: Response;
    try {
      response = await fetch(instance.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signDelivery(this.secret, Date.now(), delivery, text) },
        body: text,
        signal,
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      throw new DeliveryFailedError(this.app, instance.id, 0, signal.aborted ? 'no answer in time' : cause ?? (error as Error).message);
    }
    const answer = await response.text().catch(() => '');
    if (!response.ok) throw new DeliveryFailedError(this.app, instance.id, response.status, errorText(answer));
    try {
      return (JSON.parse(answer) as { result?: unknown }).result;
    } catch {
      return undefined;
    }
  }
}
