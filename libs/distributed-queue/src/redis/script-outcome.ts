import type { CancelResult } from '../interfaces';

/**
 * What a Lua script did: the codes of `scripts/includes/outcome.lua`, one list for every script. The stores
 * map them to their results here and nowhere else.
 */
export enum ScriptOutcome {
  Ok = 1,
  NotOurs = 2,
  NotFound = 3,
  Retried = 4,
  Buried = 5,
  Dropped = 6,
  Cancelled = 7,
  CancelRequested = 8,
  Empty = 9,
  LeaseExpired = 10,
  Revoking = 11,
  Gated = 12,
  Kept = 13,
  Moved = 14,
  NotRevoking = 15,
  Queued = 16,
  Discarded = 17,
  DroppedOldest = 18,
  PartitionFull = 19,
  StaleCount = 20,
  ShrinkRefused = 21,
  Paused = 22,
}

/** Thrown when a script returns a code its caller does not expect: a script and its store disagree. */
export class UnexpectedOutcomeError extends Error {
  constructor(script: string, code: unknown) {
    super(`script ${script} returned unexpected outcome ${String(code)}`);
    this.name = 'UnexpectedOutcomeError';
  }
}

function mapper<R extends string>(script: string, map: Partial<Record<ScriptOutcome, R>>): (code: unknown) => R {
  return (code) => {
    const result = map[Number(code) as ScriptOutcome];
    if (result === undefined) throw new UnexpectedOutcomeError(script, code);
    return result;
  };
}

/** Outcome of recording a failed delay-queue attempt. */
export type FailOutcome = 'stale' | 'retried' | 'dead' | 'dropped';
export const failOutcome = mapper<FailOutcome>('delay/fail', {
  [ScriptOutcome.NotOurs]: 'stale',
  [ScriptOutcome.Retried]: 'retried',
  [ScriptOutcome.Buried]: 'dead',
  [ScriptOutcome.Dropped]: 'dropped',
});

export const cancelOutcome = mapper<CancelResult>('delay/cancel', {
  [ScriptOutcome.Cancelled]: 'cancelled',
  [ScriptOutcome.CancelRequested]: 'cancel-requested',
  [ScriptOutcome.NotFound]: 'not-found',
});

/**
 * What a route take found: a batch ('ok'), nothing ('empty'), not ours ('lost'), our lease ran out
 * ('expired'), a hand-over is asked for ('revoking'), waiting items wait for the resize gate ('gated'), or
 * the route queue is paused ('paused': nothing starts, what is in flight stays there).
 */
export type TakeStatus = 'ok' | 'empty' | 'lost' | 'expired' | 'revoking' | 'gated' | 'paused';
export const takeOutcome = mapper<TakeStatus>('route/take', {
  [ScriptOutcome.Ok]: 'ok',
  [ScriptOutcome.Empty]: 'empty',
  [ScriptOutcome.NotOurs]: 'lost',
  [ScriptOutcome.LeaseExpired]: 'expired',
  [ScriptOutcome.Revoking]: 'revoking',
  [ScriptOutcome.Gated]: 'gated',
  [ScriptOutcome.Paused]: 'paused',
});

export type AssignOutcome = 'kept' | 'moved' | 'revoking';
export const assignOutcome = mapper<AssignOutcome>('route/assign', {
  [ScriptOutcome.Kept]: 'kept',
  [ScriptOutcome.Moved]: 'moved',
  [ScriptOutcome.Revoking]: 'revoking',
});

/** A hand-over done ('released'), refused as not ours ('lost'), or called off by the scheduler ('active'). */
export type ReleaseOutcome = 'released' | 'lost' | 'active';
export const releaseOutcome = mapper<ReleaseOutcome>('route/release', {
  [ScriptOutcome.Ok]: 'released',
  [ScriptOutcome.NotOurs]: 'lost',
  [ScriptOutcome.NotRevoking]: 'active',
});

/** What a partition did with one pushed task. */
export type PushOutcome = 'queued' | 'discarded' | 'dropped-oldest' | 'rejected';
export const pushOutcome = mapper<PushOutcome>('route/push', {
  [ScriptOutcome.Queued]: 'queued',
  [ScriptOutcome.Discarded]: 'discarded',
  [ScriptOutcome.DroppedOldest]: 'dropped-oldest',
  [ScriptOutcome.PartitionFull]: 'rejected',
});

/** True for OK, false for NOT_OURS (a fenced call); anything else is a disagreement. */
export const fencedOutcome = mapper<'ok' | 'fenced'>('fenced call', {
  [ScriptOutcome.Ok]: 'ok',
  [ScriptOutcome.NotOurs]: 'fenced',
});

/**
 * A route ack: 'partial' when some of its tasks were not in flight (a failover lost the take that handed
 * them out, or an earlier call acked them): those still waiting run again.
 */
export type RouteAckOutcome = 'ok' | 'fenced' | 'partial';
export const routeAckOutcome = mapper<RouteAckOutcome>('route ack', {
  [ScriptOutcome.Ok]: 'ok',
  [ScriptOutcome.NotOurs]: 'fenced',
  [ScriptOutcome.NotFound]: 'partial',
});
