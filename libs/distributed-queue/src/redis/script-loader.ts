import { readFileSync, readdirSync } from 'fs';
import { join } from 'path';
import type { Cluster, Redis } from 'ioredis';

/** A client this library sends commands to: a single server (or Sentinel-managed) or a cluster. */
export type RedisClient = Redis | Cluster;

/** A Lua script ready for `defineCommand`. */
export interface ScriptDefinition {
  /** Command name on the client, e.g. `dqDelayTake` for `delay/take-7.lua`. */
  command: string;
  numberOfKeys: number;
  lua: string;
}

const SCRIPT_DIR = join(__dirname, '..', 'scripts');
/** Folders of scripts; each gives its commands a prefix (`delay/take-7.lua` -> `dqDelayTake`). */
const SCRIPT_FOLDERS = ['delay', 'route', 'history', 'service', 'cron'];
const INCLUDE = /^--- @include "([^"]+)"\s*$/gm;

function toCommandName(folder: string, base: string): string {
  return 'dq' + `${folder}-${base}`.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());
}

/** Inlines `--- @include "includes/x"` lines (paths from the scripts folder), each helper once per script. */
function inline(source: string, root: string, seen: Set<string>): string {
  return source.replace(INCLUDE, (_line, include: string) => {
    if (seen.has(include)) return '';
    seen.add(include);
    return inline(readFileSync(join(root, `${include}.lua`), 'utf8'), root, seen);
  });
}

/** Loads the `<folder>/<name>-<numKeys>.lua` scripts under `root`, with their includes inlined. */
export function loadScripts(root = SCRIPT_DIR): ScriptDefinition[] {
  return SCRIPT_FOLDERS.flatMap((folder) =>
    readdirSync(join(root, folder))
      .filter((file) => file.endsWith('.lua'))
      .map((file) => {
        const match = /^(.+)-(\d+)\.lua$/.exec(file);
        if (!match) throw new Error(`Lua script ${folder}/${file} must be named <name>-<numberOfKeys>.lua`);
        const lua = inline(readFileSync(join(root, folder, file), 'utf8'), root, new Set());
        return { command: toCommandName(folder, match[1]), numberOfKeys: Number(match[2]), lua };
      }),
  );
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
