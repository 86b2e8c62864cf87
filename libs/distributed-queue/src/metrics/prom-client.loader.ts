import type * as PromClient from 'prom-client';
import { InvalidOptionsError } from '../errors';

/** The prom-client module, as `require` gives it. */
export type PromClientModule = typeof PromClient;

/**
 * Loads prom-client, an optional peer dependency, when the `metrics` option is on.
 * @throws InvalidOptionsError naming `metrics` when prom-client is not installed
 */
export function loadPromClient(): PromClientModule {
  try {
    // NOTE: required here, never imported at the top: applications without metrics need not install it.
    return require('prom-client') as PromClientModule;
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === 'MODULE_NOT_FOUND' && message.includes("'prom-client'")) {
      throw new InvalidOptionsError('metrics', 'needs the prom-client package (npm i prom-client)');
    }
    throw error;
  }
}
