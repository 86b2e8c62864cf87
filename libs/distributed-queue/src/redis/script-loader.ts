import { readFileSync, readdirSync } from 'fs';
import { join } from 'path';
import type { Cluster, Redis } from 'ioredis';

/** A client this library sends commands to: a single server (or Sentinel-managed) or a cluster. */
export type RedisClient = Redis | Cluster;

/** A Lua script ready for `defineCommand`. */
export interface ScriptDefinition {
  /** Command name on the client, e.g. `dqTake`. */
  command: string;
  numberOfKeys: number;
  lua: string;
}

const SCRIPT_DIR = join(__dirname, '..', 'scripts');
const INCLUDE = /^--- @include "([^"]+)"\s*$/gm;

function toCommandName(base: string): string {
  return 'dq' + base.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());
}

/** Loads `<name>-<numKeys>.lua` files of a folder, inlining `--- @include "file"` lines. */
export function loadScripts(dir = SCRIPT_DIR): ScriptDefinition[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.lua'))
    .map((file) => {
      const match = /^(.+)-(\d+)\.lua$/.exec(file);
      if (!match) throw new Error(`Lua script ${file} must be named <name>-<numberOfKeys>.lua`);
      const lua = readFileSync(join(dir, file), 'utf8').replace(INCLUDE, (_line, include: string) =>
        readFileSync(join(dir, `${include}.lua`), 'utf8'),
      );
      return { command: toCommandName(match[1]), numberOfKeys: Number(match[2]), lua };
    });
}

let cached: ScriptDefinition[] | undefined;

/**
 * Defines every script on the client once. ioredis sends EVALSHA and falls back to EVAL when the server
 * does not know the script (after a restart or failover), and routes by the first key on a cluster.
 */
export function defineScripts(client: RedisClient): void {
  cached ??= loadScripts();
  for (const script of cached) {
    client.defineCommand(script.command, { numberOfKeys: script.numberOfKeys, lua: script.lua });
  }
}
