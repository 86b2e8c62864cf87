import type { Due, NewTask } from '../delay/delay-queue.store';
import type { ServiceInstance, ServiceTypeOptions } from './service-registry';

/*
 * Service mode with `service.url`: what an application without Redis asks the scheduler, as one signed
 * JSON request per call to the scheduler's `clientPath` (same headers and HMAC as a delivery). The answer
 * is `{ ok: true, result }` or `{ ok: false, error: { name, message } }` with a non-2xx status.
 */

/** Where a scheduler answers its applications' calls, by default. */
export const DEFAULT_CLIENT_PATH = '/dq/service';

export type SchedulerRpc =
  | { op: 'register'; app: string; instance: ServiceInstance | null; types: Record<string, ServiceTypeOptions>; ttlMs: number }
  | { op: 'leave'; app: string; instanceId: string }
  | { op: 'submit'; type: string; tasks: NewTask[]; requestId: string }
  | { op: 'cancel'; type: string; id: string }
  | { op: 'reschedule'; type: string; id: string; due: Due }
  | { op: 'get'; type: string; id: string };

/** The operations, for validation. */
export const RPC_OPS: SchedulerRpc['op'][] = ['register', 'leave', 'submit', 'cancel', 'reschedule', 'get'];
