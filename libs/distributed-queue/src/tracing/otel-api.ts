import type * as OtelApi from '@opentelemetry/api';
import { InvalidOptionsError } from '../errors';

/** The `@opentelemetry/api` module, as the tracing code uses it. */
export type Otel = typeof OtelApi;

/**
 * Loads `@opentelemetry/api` (an optional peer dependency) when the `tracing` option is on; never loaded
 * otherwise. @throws InvalidOptionsError when the package is not installed
 */
export function loadOtelApi(): Otel {
  try {
    // NOTE: a require inside a function, not an import: applications without tracing need not install it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('@opentelemetry/api') as Otel;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new InvalidOptionsError('tracing', 'needs the @opentelemetry/api package (npm install @opentelemetry/api)');
  }
}
