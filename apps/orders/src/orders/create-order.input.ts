import { BadRequestException } from '@nestjs/common';

export interface CreateOrderInput {
  item: string;
  amount: number;
  /** Overrides the app's ORDER_CLOSE_AFTER_MS for this order. */
  closeAfterMs?: number;
}

export const MAX_ITEM_LENGTH = 200;
/** 30 days. */
export const MAX_CLOSE_AFTER_MS = 30 * 24 * 3600 * 1000;

/** Checks a POST /orders body; throws 400 listing every problem found. */
export function parseCreateOrder(body: unknown): CreateOrderInput {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequestException('The body must be a JSON object such as {"item": "book", "amount": 12.5}');
  }
  const { item, amount, closeAfterMs } = body as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof item !== 'string' || item.trim() === '') problems.push('item is required and must be a non-empty string');
  else if (item.length > MAX_ITEM_LENGTH) problems.push(`item must be at most ${MAX_ITEM_LENGTH} characters`);
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount <= 0) {
    problems.push('amount is required and must be a positive number');
  }
  if (
    closeAfterMs !== undefined &&
    (typeof closeAfterMs !== 'number' || !Number.isInteger(closeAfterMs) || closeAfterMs < 0 || closeAfterMs > MAX_CLOSE_AFTER_MS)
  ) {
    problems.push(`closeAfterMs, when given, must be an integer number of milliseconds from 0 to ${MAX_CLOSE_AFTER_MS}`);
  }
  if (problems.length > 0) throw new BadRequestException(problems);
  const input: CreateOrderInput = { item: (item as string).trim(), amount: amount as number };
  if (closeAfterMs !== undefined) input.closeAfterMs = closeAfterMs as number;
  return input;
}
