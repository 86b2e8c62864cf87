import type * as Pg from 'pg';
import { requireOptionalPeer } from '../runtime/optional-peer';

/** The pg (node-postgres) module, as `require` gives it. */
export type PgModule = typeof Pg;

/**
 * Loads pg, an optional peer dependency, when the task history is on.
 * @throws InvalidOptionsError naming `history` when pg is not installed
 */
export function loadPg(): PgModule {
  return requireOptionalPeer<PgModule>('pg', 'history');
}
