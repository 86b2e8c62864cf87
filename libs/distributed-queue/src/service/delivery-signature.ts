import { createHmac, timingSafeEqual } from 'crypto';

/*
 * Service mode's wire contract between the scheduler and an application instance. The scheduler POSTs a
 * due task to the instance's callback URL with three headers; the instance runs the task only when the
 * signature is right, the timestamp is recent and the delivery id was not seen before.
 */

/** Epoch ms (the scheduler's clock) when the request was signed. */
export const TIMESTAMP_HEADER = 'x-dq-timestamp';
/** Unique per delivery attempt (`<type>:<id>:<attempt>:<random>`): what replay protection remembers. */
export const DELIVERY_HEADER = 'x-dq-delivery';
/** `v1=<hex HMAC-SHA256(secret, "<timestamp>.<delivery>.<body>")>`. */
export const SIGNATURE_HEADER = 'x-dq-signature';

/** How far a request's timestamp may be from the instance's clock (either way) before it is refused. */
export const DEFAULT_TOLERANCE_MS = 5 * 60_000;

/** The JSON body of a delivery. */
export interface DeliveryBody {
  type: string;
  id: string;
  /** 1 for the first run. */
  attempt: number;
  /** Epoch ms (Redis clock) the task was due. */
  dueAt: number;
  payload: unknown;
  /** The handler's time budget (ms): past it the instance answers 504 and the attempt fails. */
  timeoutMs: number;
}

function mac(secret: string, timestamp: string, delivery: string, body: string): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.${delivery}.`).update(body).digest();
}

/** The three headers of a delivery signed with `secret` at `nowMs`. */
export function signDelivery(secret: string, nowMs: number, delivery: string, body: string): Record<string, string> {
  const timestamp = String(Math.floor(nowMs));
  return {
    [TIMESTAMP_HEADER]: timestamp,
    [DELIVERY_HEADER]: delivery,
    [SIGNATURE_HEADER]: `v1=${mac(secret, timestamp, delivery, body).toString('hex')}`,
  };
}

/** Why a delivery is refused. */
export type DeliveryRefusal = 'missing headers' | 'bad signature' | 'stale timestamp';

/**
 * Checks a delivery's headers against its body (the exact text the scheduler signed). Returns the delivery
 * id, or why it is refused. The signature is compared in constant time; the timestamp must be within
 * `toleranceMs` of `nowMs` (so a captured request cannot be sent again later; within the window, the caller
 * refuses delivery ids it has seen).
 */
export function verifyDelivery(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: string,
  nowMs: number,
  toleranceMs = DEFAULT_TOLERANCE_MS,
): { ok: true; delivery: string } | { ok: false; reason: DeliveryRefusal } {
  const one = (name: string): string | undefined => {
    const value = headers[name];
    return Array.isArray(value) ? undefined : value;
  };
  const timestamp = one(TIMESTAMP_HEADER);
  const delivery = one(DELIVERY_HEADER);
  const signature = one(SIGNATURE_HEADER);
  if (!timestamp || !delivery || !signature || !/^\d{1,16}$/.test(timestamp)) return { ok: false, reason: 'missing headers' };
  const given = /^v1=([0-9a-f]{64})$/.exec(signature);
  if (!given || !timingSafeEqual(Buffer.from(given[1], 'hex'), mac(secret, timestamp, delivery, body))) {
    return { ok: false, reason: 'bad signature' };
  }
  if (Math.abs(nowMs - Number(timestamp)) > toleranceMs) return { ok: false, reason: 'stale timestamp' };
  return { ok: true, delivery };
}
