import { randomBytes } from 'crypto';
import { SchedulerRequestError, TypeOwnedError } from '../errors';
import { noAnswerReason, signedPost } from './signed-post';
import type { SchedulerRpc } from './scheduler-rpc';

/** The error of a refused call, as `SchedulerRpcServer` answers it. */
interface RemoteError {
  name?: string;
  message?: string;
  type?: unknown;
  owner?: unknown;
  app?: unknown;
}

/**
 * The error a refused call throws: the library's own error where the answer carries what it needs (a type
 * another application owns: `TypeOwnedError`, as with Redis), else `SchedulerRequestError` with the answer's
 * name and message (or its text, for an answer not in the scheduler's shape, e.g. a proxy's).
 */
function remoteError(status: number, answer: { error?: RemoteError; message?: unknown } | null, text: string): Error {
  const error = answer?.error;
  if (error?.name === 'TypeOwnedError' && typeof error.type === 'string' && typeof error.owner === 'string' && typeof error.app === 'string') {
    return new TypeOwnedError(error.type, error.owner, error.app);
  }
  const message = error?.message ?? (typeof answer?.message === 'string' ? answer.message : text.slice(0, 200) || 'no body');
  return new SchedulerRequestError(status, error?.name ?? 'Error', message);
}

/** How long a call to the scheduler may take. */
const CALL_TIMEOUT_MS = 10_000;

/** An application's calls to the scheduler (service mode with `service.url`), signed with the shared secret. */
export class SchedulerRpcClient {
  constructor(
    /** The scheduler's client endpoint, e.g. `http://scheduler:4000/dq/service`. */
    private readonly endpoint: string,
    private readonly secret: string,
    private readonly app: string,
  ) {}

  /**
   * Sends one call; resolves with its result.
   * @throws TypeOwnedError when a registered type belongs to another application
   * @throws SchedulerRequestError when the scheduler refuses or fails the call otherwise, or does not answer
   */
  async call<T>(request: SchedulerRpc): Promise<T> {
    const body = JSON.stringify(request);
    const delivery = `${this.app}:${request.op}:${randomBytes(9).toString('hex')}`;
    let response: Response;
    try {
      response = await signedPost(this.endpoint, this.secret, delivery, body, AbortSignal.timeout(CALL_TIMEOUT_MS));
    } catch (error) {
      throw new SchedulerRequestError(0, (error as Error).name, noAnswerReason(error));
    }
    const text = await response.text().catch(() => '');
    let answer: { ok?: boolean; result?: T; error?: RemoteError; message?: unknown };
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      throw new SchedulerRequestError(response.status, 'BadAnswer', text.slice(0, 200) || 'no body');
    }
    if (!response.ok || answer?.ok !== true) throw remoteError(response.status, answer, text);
    return answer.result as T;
  }
}
