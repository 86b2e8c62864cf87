/** The task that closes an unpaid order; its id is the order id. */
export const CLOSE_ORDER_TASK = 'order.close';

export interface CloseOrderPayload {
  orderId: string;
}

/** Orders start pending and move once, to paid or to closed. */
export type OrderStatus = 'pending' | 'paid' | 'closed';

export interface Order {
  id: string;
  item: string;
  amount: number;
  status: OrderStatus;
  /** ISO 8601 times. */
  createdAt: string;
  paidAt?: string;
  closedAt?: string;
}

/** An order as read back from its Redis hash. */
export function toOrder(hash: Record<string, string>): Order {
  const order: Order = {
    id: hash.id,
    item: hash.item,
    amount: Number(hash.amount),
    status: hash.status as OrderStatus,
    createdAt: hash.createdAt,
  };
  if (hash.paidAt) order.paidAt = hash.paidAt;
  if (hash.closedAt) order.closedAt = hash.closedAt;
  return order;
}
