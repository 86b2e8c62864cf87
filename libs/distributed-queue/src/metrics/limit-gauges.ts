import type { GaugeDefinition } from './gauge-definition';

/**
 * The scrape-time gauges of the delay-queue types' fleet-wide limits (`QueueControlService.getLimits`, one
 * read of a few keys per type): what is in force (an operator's override, else the workers' options), the
 * leases held against it, and whether a handler's `RateLimitedError` holds the type back now.
 */
export const LIMIT_GAUGES: GaugeDefinition[] = [
  {
    suffix: 'rate_limit_per_second',
    help: 'Fleet-wide rate limit in force per delay-queue type, in tasks started per second (max / perMs); absent without one',
    labelNames: ['type'],
    fill: (gauge, { limits }) => {
      for (const { type, limits: l } of limits ?? []) {
        const rate = l.rateLimit.effective;
        if (rate) gauge.set({ type }, (rate.max * 1000) / rate.perMs);
      }
    },
  },
  {
    suffix: 'global_concurrency',
    help: 'Fleet-wide concurrency in force per delay-queue type (tasks holding a lease at once); absent without one',
    labelNames: ['type'],
    fill: (gauge, { limits }) => {
      for (const { type, limits: l } of limits ?? []) if (l.globalConcurrency.effective !== null) gauge.set({ type }, l.globalConcurrency.effective);
    },
  },
  {
    suffix: 'leases_live',
    help: 'Tasks of each delay-queue type holding a live lease across the fleet (running or reserved to run), what the fleet-wide concurrency counts',
    labelNames: ['type'],
    fill: (gauge, { limits }) => {
      for (const { type, limits: l } of limits ?? []) gauge.set({ type }, l.running);
    },
  },
  {
    suffix: 'rate_limited',
    help: 'Whether a handler\'s RateLimitedError holds a delay-queue type back now (1: no task of it starts until limitedUntil)',
    labelNames: ['type'],
    fill: (gauge, { limits }) => {
      for (const { type, limits: l } of limits ?? []) gauge.set({ type }, l.limitedUntil === null ? 0 : 1);
    },
  },
];
