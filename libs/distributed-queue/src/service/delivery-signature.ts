import { createHmac, timingSafeEqual } from 'crypto';

/*
 * Service mode's wire contract between the scheduler and an application instance. The scheduler POSTs the
 * due tasks it holds for an instance (one or more: `DeliveryBatch`) to the instance's callback URL with
 * three headers; the instance runs them only when the signature is right, the timestamp is recent and the
 * delivery id was not seen before. It answers 200 with one NDJSON line per task as each one finishes
 * (`DeliveryResult`), or refuses the whole request (401, 400, 413).
 */

/** Epoch ms (the scheduler's clock) when the request was signed. */
export const TIMESTAMP_HEADER = 'x-dq-timestamp';
/** Unique per request (`<type, URL-encoded>:<random>`, ASCII): what replay protection remembers. */
export const DELIVERY_HEADER = 'x-dq-delivery';
/** `v1=<hex HMAC-SHA256(secret, "<timestamp>.<delivery>.<body>")>`. */
export const SIGNATURE_HEADER = 'x-dq-signature';

/** How far a request's timestamp may be from the instance's clock (either way) before it is refused. */
export const DEFAULT_TOLERANCE_MS = 5 * 60_000;

/** One task of a delivery. */
export interface DeliveryBody {
  /** The task type. */
  type: string;
  /** The task's id. */
  id: string;
  /** 1 for the first run. */
  attempt: number;
  /** Epoch ms (Redis clock) the task was due. */
  dueAt: number;
  /** The task's payload. */
  payload: unknown;
  /** The handler's time budget (ms): past it the instance answers 504 and the attempt fails. */
  timeoutMs: number;
}

/** The JSON body of a delivery request. */
export interface DeliveryBatch {
  /** The tasks delivered, at most `MAX_BATCH`. */
  deliveries: DeliveryBody[];
}

/**
 * One line of the answer: how the task at index `i` of the request ended; a handler's error carries its stack
 * (bounded, see `MAX_STACK_BYTES`) when it had one (versions before stacks were kept send none).
 */
export type DeliveryResult =
  | {
      /** The task's index in the request's `deliveries`. */
      i: number;
      /** 200: the handler succeeded. */
      status: 200;
      /** What the handler returned (absent when it returned nothing). */
      result?: unknown;
    }
  | {
      /** The task's index in the request's `deliveries`. */
      i: number;
      /**
       * 404: no worker for the type in the application; 500: the handler threw; 503: the instance is shutting
       * down; 504: the handler ran past `timeoutMs`.
       */
      status: 404 | 500 | 503 | 504;
      /** The error. */
      error: {
        /** The error's name (its class name). */
        name: string;
        /** The error's message. */
        message: string;
        /** The error's stack, bounded to `MAX_STACK_BYTES`, when it had one. */
        stack?: string;
      };
    };

/** The most tasks one request carries. */
export const MAX_BATCH = 100;

/** The answer's content type: one JSON object per line. */
export const RESULTS_CONTENT_TYPE = 'application/x-ndjson';

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
):
  | {
      /** The delivery is genuine. */
      ok: true;
      /** Its delivery id (the `x-dq-delivery` header). */
      delivery: string;
    }
  | {
      /** The delivery is refused. */
      ok: false;
      /** Why: `missing headers`, `bad signature` or `stale timestamp`. */
      reason: DeliveryRefusal;
    } {
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
