import { readFileSync, readdirSync } from 'fs';
import { join } from 'path';
import type { Cluster, Redis } from 'ioredis';
import { LuaScript } from './lua-script';
import { pruneUnusedFunctions } from './lua-prune';

/** A client this library sends commands to: a single server (or Sentinel-managed) or a cluster. */
export type RedisClient = Redis | Cluster;

/** A Lua script of this library, with its includes inlined. */
export interface ScriptDefinition {
  /** Command name on the client, e.g. `dqDelayTake` for `delay/take-7.lua`. */
  command: string;
  numberOfKeys: number;
  lua: string;
  /**
   * Declares `slotGuardKey` too: it touches keys it does not declare (an `@undeclared-keys` include), or it
   * keeps a reply for repeated calls (an `@slot-guard` include: a durable call's `WAIT` is sent to the node
   * the client maps the slot to, so the write must not run on the other one after an ASK).
   */
  slotGuard: boolean;
}

const SCRIPT_DIR = join(__dirname, '..', 'scripts');
/** Folders of scripts; each gives its commands a prefix (`delay/take-7.lua` -> `dqDelayTake`). */
const SCRIPT_FOLDERS = ['delay', 'route', 'history', 'service', 'cron', 'flow'];
const INCLUDE = /^--- @include "([^"]+)"\s*$/gm;
/** The mark of a helper whose scripts must declare the slot guard (see `slotGuardKey`). */
const GUARD_MARK = /^--- @(undeclared-keys|slot-guard)\s*$/m;

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

/** Loads the `<folder>/<name>-<numKeys>.lua` scripts under `root`, with their includes inlined (the helpers they never call left out). */
export function loadScripts(root = SCRIPT_DIR): ScriptDefinition[] {
  return SCRIPT_FOLDERS.flatMap((folder) =>
    readdirSync(join(root, folder))
      .filter((file) => file.endsWith('.lua'))
      .map((file) => {
        const match = /^(.+)-(\d+)\.lua$/.exec(file);
        if (!match) throw new Error(`Lua script ${folder}/${file} must be named <name>-<numberOfKeys>.lua`);
        const lua = pruneUnusedFunctions(inline(readFileSync(join(root, folder, file), 'utf8'), root, new Set()));
        return { command: toCommandName(folder, match[1]), numberOfKeys: Number(match[2]), lua, slotGuard: GUARD_MARK.test(lua) };
      }),
  );
}

/**
 * Scripts sent through ioredis's auto-pipeline (its `defineCommand`) rather than at once: a route runner's
 * last acks and its next take are called together and must run in that order, also when a cluster client
 * re-sends them after a lost connection. ioredis re-sends a pipeline whole and in order; two commands sent
 * on their own are re-sent each on its own, and the take could run first and replay what was acked.
 */
const PIPELINED = new Set(['dqRouteAck', 'dqRouteTake']);

let cached: { definition: ScriptDefinition; script: LuaScript }[] | undefined;

/**
 * Adds every script to the client as a method named after its command (`client.dqDelayTake(...keys,
 * ...args)`): EVALSHA, EVAL when the server does not know the script (after a restart or failover), routed
 * by the first key on a cluster. Most are sent with `LuaScript`, as the client's own methods (see there
 * why); those in `PIPELINED` are ioredis commands, which its auto-pipelines copy (few, so that is cheap).
 */
export function defineScripts(client: RedisClient): void {
  cached ??= loadScripts().map((definition) => ({ definition, script: new LuaScript(definition.lua, definition.numberOfKeys, definition.slotGuard) }));
  const methods = client as unknown as Record<string, (...args: (string | number | Buffer)[]) => Promise<unknown>>;
  for (const { definition, script } of cached) {
    if (PIPELINED.has(definition.command)) {
      if (definition.slotGuard) throw new Error(`${definition.command}: a pipelined script cannot declare the slot guard`);
      client.defineCommand(definition.command, { numberOfKeys: definition.numberOfKeys, lua: definition.lua });
    } else {
      methods[definition.command] = (...args) => script.run(client, args);
    }
  }
}
