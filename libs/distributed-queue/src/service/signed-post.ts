import { signDelivery } from './delivery-signature';

/**
 * POSTs a JSON body to the other side of service mode (a delivery to an instance, or an application's call
 * to the scheduler), signed with the shared secret under the request id `delivery`.
 */
export function signedPost(url: string, secret: string, delivery: string, body: string, signal: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signDelivery(secret, Date.now(), delivery, body) },
    body,
    signal,
  });
}

/** Whether a request failed because nothing listened (ECONNREFUSED on every address tried): nothing was sent. */
export function isConnectionRefused(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string; errors?: { code?: string }[] } })?.cause;
  if (cause?.code === 'ECONNREFUSED') return true;
  return Array.isArray(cause?.errors) && cause.errors.length > 0 && cause.errors.every((e) => e?.code === 'ECONNREFUSED');
}

/** Why a request got no answer: the connection error's code (ECONNREFUSED, ECONNRESET...) or 'no answer in time'. */
export function noAnswerReason(error: unknown): string {
  if ((error as Error)?.name === 'TimeoutError') return 'no answer in time';
  return (error as { cause?: { code?: string } })?.cause?.code ?? (error as Error)?.message ?? String(error);
}
