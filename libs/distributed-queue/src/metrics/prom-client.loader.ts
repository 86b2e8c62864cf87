import type * as PromClient from 'prom-client';
import { requireOptionalPeer } from '../runtime/optional-peer';

/** The prom-client module, as `require` gives it. */
export type PromClientModule = typeof PromClient;

/**
 * Loads prom-client, an optional peer dependency, when the `metrics` option is on.
 * @throws InvalidOptionsError naming `metrics` when prom-client is not installed
 */
export function loadPromClient(): PromClientModule {
  return requireOptionalPeer<PromClientModule>('prom-client', 'metrics');
}
