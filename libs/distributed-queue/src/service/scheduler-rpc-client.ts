import { randomBytes } from 'crypto';
import { SchedulerRequestError } from '../errors';
import { noAnswerReason, signedPost } from './signed-post';
import type { SchedulerRpc } from './scheduler-rpc';

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
   * @throws SchedulerRequestError when the scheduler refuses or fails the call, or does not answer
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
    let answer: { ok?: boolean; result?: T; error?: { name?: string; message?: string } };
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      throw new SchedulerRequestError(response.status, 'BadAnswer', text.slice(0, 200) || 'no body');
    }
    if (!response.ok || answer.ok !== true) {
      throw new SchedulerRequestError(response.status, answer.error?.name ?? 'Error', answer.error?.message ?? 'no message');
    }
    return answer.result as T;
  }
}
