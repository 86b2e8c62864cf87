import { randomBytes } from 'crypto';
import { DeliveryFailedError, DeliveryNotMadeError, NoLiveInstanceError } from '../errors';
import { SHUTDOWN_STATUS } from './delivery-runner';
import type { Task, TaskHandler } from '../interfaces';
import { boundedStack, keptError } from '../runtime/error-stack';
import { MAX_BATCH, type DeliveryBody, type DeliveryResult } from './delivery-signature';
import { isConnectionRefused, noAnswerReason, signedPost } from './signed-post';
import { BATCH_HEAD, BATCH_TAIL, splitBatches } from './split-batches';
import type { ServiceInstance } from './service-registry';

/** FNV-1a of a string: spreads task ids over instances the same way in every replica. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * The instance that gets attempt `attempt` of task `id`: the next attempt goes to the next instance, and
 * never to `avoid` (where the previous attempt failed) while there is another.
 */
export function pickInstance<T>(instances: readonly T[], id: string, attempt: number, avoid?: (instance: T) => boolean): T | undefined {
  if (instances.length === 0) return undefined;
  const first = (hash(id) + attempt) % instances.length;
  const picked = instances[first];
  return avoid?.(picked) && instances.length > 1 ? instances[(first + 1) % instances.length] : picked;
}

/**
 * With no live instance left, a task is handed back after this pause (or the consumer's abort), not at once:
 * the consumer would take it again straight away until the scheduler stops the type's consumer.
 */
const NO_INSTANCE_PAUSE_MS = 200;

/** What an instance answers when it refuses a delivery before running anything (see `ServiceClient.handle`). */
const UNAVAILABLE_STATUS = 503;

function errorText(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { name?: string; message?: string } };
    if (body.error?.name) return `${body.error.name}: ${body.error.message ?? ''}`;
  } catch {
    // not the client's JSON: say what came back
  }
  return text.slice(0, 200) || 'no body';
}

/** The request limit of an application registered by a version without `maxRequestBytes` (Express's default). */
export const LEGACY_MAX_REQUEST_BYTES = 100 * 1024;

/** A task handed to the delivery, until its result line (or a failure) settles it. */
interface Pending {
  task: Task;
  /** Its delivery's JSON, and that text's size in bytes. */
  json: string;
  bytes: number;
  resolve(result: unknown): void;
  reject(error: Error): void;
  settled: boolean;
}

function settle(pending: Pending, error: Error | null, result?: unknown): void {
  if (pending.settled) return;
  pending.settled = true;
  if (error) pending.reject(error);
  else pending.resolve(result);
}

/**
 * The scheduler's handler of one registered type: POSTs due tasks, signed, to live instances of the owning
 * application. Tasks handed over in the same tick for the same instance go in one request (at most
 * `MAX_BATCH` tasks and `maxRequestBytes` bytes, the limit the application registered), and each settles
 * when its result line comes back: 200 is done (its `result` is the task's result); any other status, a
 * refused or failed request, a connection error or no answer within `timeoutMs` + grace throws
 * `DeliveryFailedError`: a failed attempt. No live instance, a refused connection, a 503 `Unavailable` (the
 * instance refused before running anything) or a task's line 503 `ShutdownError` (the instance shut down
 * before it ended) throws `DeliveryNotMadeError`: the consumer hands the task back without counting the attempt.
 */
export class HttpDelivery implements TaskHandler {
  private readonly queued = new Map<string, { instance: ServiceInstance; items: Pending[] }>();
  private flushScheduled = false;

  constructor(
    private readonly app: string,
    private readonly type: string,
    private readonly secret: string,
    /** The handler's own budget, sent with each task. */
    private readonly timeoutMs: number,
    /** How long past `timeoutMs` the request may take. */
    private readonly graceMs: number,
    private readonly instances: () => readonly ServiceInstance[],
    /**
     * The instance a task's last recorded failure was on: kept with the task in Redis by the script that
     * scheduled the retry (`DeliveryFailedError.instance`), so every scheduler replica avoids it.
     */
    private readonly lastFailedOn: (id: string) => Promise<string | null>,
    /**
     * Told when an instance refused a delivery before running anything (its connection, or a 503
     * `Unavailable`: starting, or its Redis unreachable): it gets no more deliveries (see `ServiceScheduler`).
     */
    private readonly refused: (instance: ServiceInstance, why: string) => void,
    /** The largest request body the application's instances take (registered with the type). */
    private readonly maxRequestBytes = LEGACY_MAX_REQUEST_BYTES,
  ) {}

  async handle(task: Task, signal: AbortSignal): Promise<unknown> {
    // NOTE: a first attempt has no failure to avoid: no read.
    const failedOn = task.attempt > 1 ? await this.lastFailedOn(task.id).catch(() => null) : null;
    const instance = pickInstance(this.instances(), task.id, task.attempt, (i) => i.id === failedOn);
    if (!instance) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, NO_INSTANCE_PAUSE_MS);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
      throw new NoLiveInstanceError(this.app);
    }
    return new Promise((resolve, reject) => {
      const body: DeliveryBody = { type: task.type, id: task.id, attempt: task.attempt, dueAt: task.dueAt, payload: task.payload, timeoutMs: this.timeoutMs };
      const json = JSON.stringify(body);
      const pending: Pending = { task, json, bytes: Buffer.byteLength(json), resolve, reject, settled: false };
      // NOTE: the consumer aborts on its timeout, a cancel or a lost lease; the request goes on for the others.
      signal.addEventListener('abort', () => settle(pending, signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason))), { once: true });
      let group = this.queued.get(instance.id);
      if (!group) this.queued.set(instance.id, (group = { instance, items: [] }));
      group.items.push(pending);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    for (const { instance, items } of this.queued.values()) {
      for (const batch of splitBatches(items, MAX_BATCH, this.maxRequestBytes)) void this.send(instance, batch);
    }
    this.queued.clear();
  }

  private async send(instance: ServiceInstance, items: Pending[]): Promise<void> {
    const fail = (status: number, detail: string): void => items.forEach((p) => settle(p, new DeliveryFailedError(this.app, instance.id, status, detail)));
    const notMade = (why: string): void => {
      items.forEach((p) => settle(p, new DeliveryNotMadeError(this.app, instance.id, why)));
      this.refused(instance, why);
    };
    const text = BATCH_HEAD + items.map((p) => p.json).join(',') + BATCH_TAIL;
    if (Buffer.byteLength(text) > this.maxRequestBytes) {
      // NOTE: one task bigger than the application takes (submitted elsewhere, with a larger maxPayloadBytes).
      return fail(413, `the task is larger than the ${this.maxRequestBytes} bytes the application takes (service.maxRequestBytes): submit smaller payloads`);
    }
    // NOTE: the type URL-encoded: a header holds Latin-1 only (fetch refused a type named with an emoji, and
    // every delivery of it failed)
    const delivery = `${encodeURIComponent(this.type)}:${randomBytes(9).toString('hex')}`;
    try {
      const response = await signedPost(instance.url, this.secret, delivery, text, AbortSignal.timeout(this.timeoutMs + this.graceMs));
      if (!response.ok || !response.body) {
        const why = errorText(await response.text().catch(() => ''));
        // NOTE: the instance's own refusal before it ran anything (starting; its Redis unreachable for the
        // replay check, as while it reconnects after an outage): not an attempt of the tasks.
        if (response.status === UNAVAILABLE_STATUS && why.startsWith('Unavailable:')) return notMade(why);
        fail(response.status, why);
        return;
      }
      await this.readResults(response.body, items, instance);
      fail(200, 'the instance answered no result for the task');
    } catch (error) {
      if (!isConnectionRefused(error)) return fail(0, noAnswerReason(error));
      // NOTE: nothing reached the instance: not an attempt; the tasks go back and the instance gets no more.
      notMade('the instance refused the connection');
    }
  }

  /** Settles each task as its result line arrives. */
  private async readResults(body: ReadableStream<Uint8Array>, items: Pending[], instance: ServiceInstance): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line) this.settleLine(line, items, instance);
      }
    }
  }

  private settleLine(line: string, items: Pending[], instance: ServiceInstance): void {
    let result: DeliveryResult;
    try {
      result = JSON.parse(line) as DeliveryResult;
    } catch {
      return;
    }
    const pending = items[result.i];
    if (!pending) return;
    if (result.status === 200) settle(pending, null, result.result);
    else if (result.status === SHUTDOWN_STATUS && result.error?.name === 'ShutdownError') {
      settle(pending, new DeliveryNotMadeError(this.app, instance.id, 'the instance stopped before the task ended'));
    } else settle(pending, failedDelivery(this.app, instance.id, result));
  }
}

/**
 * The failed attempt a result line other than 200 reports, with the application's stack when it sent one.
 * NOTE: that stack is bounded again here: an instance of another version may send any size.
 */
export function failedDelivery(app: string, instance: string, result: Exclude<DeliveryResult, { status: 200 }>): DeliveryFailedError {
  const error = result.error as Partial<typeof result.error> | undefined;
  const stack = boundedStack(typeof error?.stack === 'string' ? error.stack : undefined);
  const kept = keptError({ name: error?.name, message: error?.message });
  return new DeliveryFailedError(app, instance, result.status, `${kept.name}: ${kept.message}`, stack, typeof error?.name === 'string' ? kept.name : undefined);
}
