/** The ordered task that applies one event to an account; its ordering key is the account id. */
export const LEDGER_APPLY_TASK = 'ledger.apply';

export type LedgerEventType = 'deposit' | 'withdraw';

/** Payload of a `ledger.apply` task. `amount` in currency units, at most 2 decimals (stored as cents). */
export interface LedgerApplyPayload {
  eventId: string;
  type: LedgerEventType;
  amount: number;
}

/** 'rejected': a withdraw larger than the balance; the balance is unchanged. */
export type LedgerEventResult = 'applied' | 'rejected';

/** One processed event as kept in the account's capped event log. */
export interface LedgerEntry {
  eventId: string;
  type: LedgerEventType;
  amount: number;
  result: LedgerEventResult;
  /** The balance right after this event. */
  balance: number;
  /** 1 for the first event processed for the account, 2 for the next, ... */
  seq: number;
  /** When the worker processed it (ISO 8601, the worker's clock). */
  at: string;
  /** The app instance (route machine id) that processed it, and its ownership epoch of the partition. */
  machine: string;
  epoch: number | null;
}

export interface Account {
  id: string;
  balance: number;
  /** Events that changed the balance. */
  applied: number;
  /** Withdrawals refused because the balance was too low. */
  rejected: number;
  /** The last `MAX_LAST_EVENTS` processed events (applied and rejected), oldest first. */
  lastEvents: LedgerEntry[];
}

/** Length of an account's event log. */
export const MAX_LAST_EVENTS = 20;
/**
 * Event ids remembered per account to skip redeliveries. The route queue redelivers at most the batch that
 * was in flight when a partition changed owner (batchSize, 100 by default), so 1000 leaves a wide margin.
 */
export const MAX_SEEN_EVENT_IDS = 1000;

export const toCents = (amount: number): number => Math.round(amount * 100);
export const fromCents = (cents: number): number => cents / 100;
