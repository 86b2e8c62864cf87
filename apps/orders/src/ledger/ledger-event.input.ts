import { BadRequestException } from '@nestjs/common';
import { fromCents, LedgerEventType, toCents } from './ledger';

export interface LedgerEventInput {
  type: LedgerEventType;
  amount: number;
  /** Optional client-chosen id: posting the same event twice then applies it once. @default a random UUID */
  eventId?: string;
}

/** Account ids and event ids: used in Redis key names and as ordering keys. */
const ID = /^[A-Za-z0-9_.:-]{1,64}$/;
const FIELDS = ['type', 'amount', 'eventId'];
/** Largest amount of one event, in currency units. */
export const MAX_AMOUNT = 1_000_000_000;

/** Checks an account id path parameter; 400 when it is unusable. */
export function parseAccountId(id: string): string {
  if (!ID.test(id)) throw new BadRequestException('The account id must be 1 to 64 characters among A-Z a-z 0-9 _ . : -');
  return id;
}

/** Checks a POST /accounts/:id/events body; throws 400 listing every problem found. */
export function parseLedgerEvent(body: unknown): LedgerEventInput {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequestException('The body must be a JSON object such as {"type": "deposit", "amount": 12.5}');
  }
  const { type, amount, eventId } = body as Record<string, unknown>;
  const problems: string[] = [];
  const unknown = Object.keys(body).filter((key) => !FIELDS.includes(key));
  if (unknown.length > 0) problems.push(`unknown field(s) ${unknown.join(', ')} (known: ${FIELDS.join(', ')})`);
  if (type !== 'deposit' && type !== 'withdraw') problems.push('type is required and must be "deposit" or "withdraw"');
  if (
    typeof amount !== 'number' || !Number.isFinite(amount) || toCents(amount) < 1 || amount > MAX_AMOUNT ||
    Math.abs(amount * 100 - toCents(amount)) > 1e-6
  ) {
    problems.push(`amount is required and must be a number from 0.01 to ${MAX_AMOUNT} with at most 2 decimals`);
  }
  if (eventId !== undefined && (typeof eventId !== 'string' || !ID.test(eventId))) {
    problems.push('eventId, when given, must be 1 to 64 characters among A-Z a-z 0-9 _ . : -');
  }
  if (problems.length > 0) throw new BadRequestException(problems);
  // Rounded to cents: 0.1 + 0.2 arrives as 0.3.
  const input: LedgerEventInput = { type: type as LedgerEventType, amount: fromCents(toCents(amount as number)) };
  if (eventId !== undefined) input.eventId = eventId as string;
  return input;
}
