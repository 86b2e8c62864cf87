import { createHash } from 'crypto';
import { Command, type Cluster, type Redis } from 'ioredis';
import { encodeCommand } from './resp-encode';

type Arg = string | number | Buffer;

/**
 * A Lua script sent to Redis the way ioredis's `defineCommand` sends one, but outside the client's script
 * set: EVAL with the body on a connection's first call, EVALSHA after, and EVAL again when the server
 * answers NOSCRIPT (it restarted or failed over). Routed by its first key on a cluster, with the client's
 * `keyPrefix` on its keys.
 *
 * NOTE: why not `defineCommand`: ioredis copies every defined script onto each auto-pipeline it creates
 * (two properties per script, ~19 KB with this library's scripts), and at low load every command makes its
 * own pipeline. That garbage was a third of what a task's round trip allocated, and the young-generation
 * collections it caused were in a quarter of the slowest round trips. Calls are written at once, in call
 * order, on the client's connection, each as one buffer (`encodeCommand`).
 */
export class LuaScript {
  readonly sha: string;
  /** A call of this script; `args` are the keys then the arguments. */
  private readonly ScriptCommand: new (args: Arg[], options: { keyPrefix?: string; replyEncoding: 'utf8' }) => Command;

  /**
   * @param slotGuard declare one more key, `<first key>:slot-guard`, that never exists: Redis then answers
   * TRYAGAIN, and runs nothing, while the script's slot migrates between cluster nodes (see `slotGuardKey`).
   */
  constructor(readonly lua: string, readonly numberOfKeys: number, readonly slotGuard = false) {
    const sha = createHash('sha1').update(lua).digest('hex');
    this.sha = sha;
    // The connections (sockets) this script was sent on with its body: a socket is a connection's life.
    const loaded = new WeakSet<object>();
    this.ScriptCommand = class ScriptCommand extends Command {
      /** The connection this call was last written on: a NOSCRIPT reply came from there. */
      private socket?: object;

      constructor(args: Arg[], options: { keyPrefix?: string; replyEncoding: 'utf8' }) {
        // NOTE: the arguments are set here, not given to ioredis's constructor: it copies them with
        // Array.prototype.flat and walks them again to prefix the keys (a tenth of a call's cost in Node).
        super('evalsha', [], { replyEncoding: options.replyEncoding });
        this.args = scriptArgs(sha, numberOfKeys, args, slotGuard, options.keyPrefix);
        // NOTE: wrapped once here, not on each write: a call re-sent after a lost connection or a MOVED
        // reply is written again, and wrappers stacked up (one per write) in its rejection.
        const reject = this.reject;
        this.reject = (error: Error) => {
          if (this.socket && error.message.includes('NOSCRIPT')) loaded.delete(this.socket);
          reject.call(this, error);
        };
      }

      override toWritable(socket: object): string | Buffer {
        this.socket = socket;
        if (!loaded.has(socket)) {
          loaded.add(socket);
          this.name = 'eval';
          this.args[0] = lua;
        } else if (this.name === 'eval') {
          this.name = 'evalsha';
          this.args[0] = sha;
        }
        return encodeCommand(this.name, this.args as (string | Buffer)[]);
      }
    };
  }

  /**
   * Runs the script with `args` (its keys first, then its arguments); resolves with its reply. Rejects,
   * never throws.
   */
  run(client: Redis | Cluster, args: Arg[]): Promise<unknown> {
    try {
      return this.send(client, args);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private send(client: Redis | Cluster, args: Arg[]): Promise<unknown> {
    const options = { keyPrefix: client.options.keyPrefix, replyEncoding: 'utf8' as const };
    const command = new this.ScriptCommand(args, options);
    // NOTE: a NOSCRIPT answer already forgot the socket: the resend goes out as EVAL with the body.
    command.promise = command.promise.catch((error: Error) => {
      if (!error.message.includes('NOSCRIPT')) throw error;
      const resend = new this.ScriptCommand(args, options);
      return client.sendCommand(resend);
    });
    return client.sendCommand(command) as Promise<unknown>;
  }
}

/**
 * The key a guarded script declares last: in its first key's slot (same hash tag), never written.
 * NOTE: why: a script may touch keys it did not declare (the waiting set's chunks, known only inside it).
 * While its slot migrates, Redis stops such a script at the first of those keys that has moved (after its
 * earlier writes: half a script applied), and on the importing node reads a key not yet moved as missing.
 * Redis checks declared keys before a script starts: a declared key that exists on neither side makes it
 * answer TRYAGAIN on both nodes until the slot is settled, so a guarded script runs only on a whole slot.
 */
export function slotGuardKey(firstKey: Arg): string {
  return `${String(firstKey)}:slot-guard`;
}

/**
 * EVALSHA's arguments: the keys (and the slot guard's) with the client's `keyPrefix`, numbers as strings
 * (what ioredis's Command would make of them).
 */
export function scriptArgs(sha: string, numberOfKeys: number, args: Arg[], slotGuard: boolean, keyPrefix = ''): (string | Buffer)[] {
  // NOTE: a call with fewer arguments than keys is sent as given: Redis refuses it (nothing invented).
  const keys = Math.min(numberOfKeys, args.length);
  // NOTE: made at its length, not as a literal grown by push: V8 came to allocate those literals in the old
  // generation (pretenuring), where each dead list kept its young strings alive through every young-generation
  // collection (pauses of 3-8 ms instead of ~1; test/young-calls.e2e-spec.ts).
  const out: (string | Buffer)[] = new Array(2 + args.length + (slotGuard ? 1 : 0));
  out[0] = sha;
  out[1] = String(numberOfKeys + (slotGuard ? 1 : 0));
  let at = 2;
  for (let i = 0; i < keys; i++) out[at++] = prefixed(keyPrefix, args[i]);
  if (slotGuard) out[at++] = keyPrefix + slotGuardKey(args[0]);
  for (let i = keys; i < args.length; i++) {
    const arg = args[i];
    out[at++] = typeof arg === 'string' || Buffer.isBuffer(arg) ? arg : String(arg);
  }
  return out;
}

function prefixed(keyPrefix: string, key: Arg): string | Buffer {
  if (Buffer.isBuffer(key)) return keyPrefix === '' ? key : Buffer.concat([Buffer.from(keyPrefix), key]);
  return keyPrefix + String(key);
}
