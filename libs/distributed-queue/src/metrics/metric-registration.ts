import type { Registry } from 'prom-client';
import { InvalidOptionsError } from '../errors';

/**
 * The metric registered under `name` in `registry`, created by `create` when there is none. Two
 * applications in one process (or one closed and started again) share the metric instead of failing on
 * prom-client's "already registered".
 * @throws InvalidOptionsError when the name holds a metric of another kind (another library's)
 */
export function registeredMetric<M extends object>(registry: Registry, name: string, kind: abstract new (...args: never[]) => M, create: () => M): M {
  const existing = registry.getSingleMetric(name);
  if (existing === undefined) return create();
  // NOTE: by name too: a registry made by another copy of prom-client holds that copy's classes.
  if (existing instanceof kind || existing.constructor?.name === kind.name) return existing as M;
  throw new InvalidOptionsError('metrics.prefix', `metric ${name} is already registered as another kind of metric; choose another prefix`);
}
