import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as path from 'path';

/** Repository root (test/support/../..). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildHandle {
  readonly pid: number;
  /** Every IPC message received from the child, in order. */
  readonly messages: any[];
  /** Resolves with the first message (already received or future) matching predicate. */
  waitForMessage(predicate: (m: any) => boolean, timeoutMs?: number): Promise<any>;
  send(msg: unknown): void;
  /** Sends a signal (default SIGKILL); no-op when the child already exited. */
  kill(signal?: NodeJS.Signals): void;
  readonly exited: Promise<ChildExit>;
  /** Collected stdout + stderr (interleaved, capped to the last 1 MB). */
  output(): string;
}

let pdeathsigSupported: boolean | undefined;

/**
 * Wraps a command with `setpriv --pdeathsig SIGKILL` (util-linux) when available, so the
 * spawned process is SIGKILLed by the kernel if the spawning process dies, even by SIGKILL.
 * setpriv execs the command, so the child's pid is the command's pid.
 */
export function withParentDeathSignal(command: string, args: string[]): [string, string[]] {
  if (pdeathsigSupported === undefined) {
    const probe = spawnSync('setpriv', ['--pdeathsig', 'SIGKILL', '--', 'true'], { stdio: 'ignore', timeout: 5000 });
    pdeathsigSupported = probe.status === 0;
  }
  return pdeathsigSupported ? ['setpriv', ['--pdeathsig', 'SIGKILL', '--', command, ...args]] : [command, args];
}

const MAX_OUTPUT = 1024 * 1024;
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Best effort only: inside a jest test file `process` is a sandbox copy whose 'exit' never fires;
  // the pdeathsig wrapper is what really protects against leaks there.
  process.on('exit', () => {
    for (const proc of live) if (proc.pid) try { process.kill(proc.pid, 'SIGKILL'); } catch { /* gone */ }
  });
}

function tail(text: string, chars = 4000): string {
  return text.length > chars ? '…' + text.slice(-chars) : text;
}

/** The require hook that compiles the children's TypeScript (ts-node's transpile-only, with a disk cache). */
const TS_REGISTER = path.join(__dirname, 'ts-cache-register.js');

/**
 * Runs a TypeScript file (path absolute or relative to the repo root) in a separate Node process
 * via ts-cache-register.js (TypeScript's transpile-only, cached on disk; stacks mapped to the .ts
 * sources as under ts-node), with an IPC channel.
 */
export function spawnChild(file: string, env: Record<string, string> = {}): ChildHandle {
  installExitHook();
  const script = path.resolve(REPO_ROOT, file);
  // NOTE: not ts-node: it transpiled the library anew in every child, about 3 s of CPU each; the suite
  // spawns hundreds of children on a 2-core machine. The cache makes a child's start ~0.3 s of CPU.
  const [cmd, args] = withParentDeathSignal(process.execPath, ['--enable-source-maps', '-r', TS_REGISTER, '-r', 'tsconfig-paths/register', script]);
  const proc = spawn(cmd, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  live.add(proc);

  let out = '';
  const collect = (chunk: Buffer): void => {
    out += chunk.toString('utf8');
    if (out.length > MAX_OUTPUT) out = out.slice(-MAX_OUTPUT);
  };
  proc.stdout?.on('data', collect);
  proc.stderr?.on('data', collect);

  const messages: any[] = [];
  const listeners = new Set<() => void>();
  proc.on('message', (m) => {
    messages.push(m);
    for (const l of [...listeners]) l();
  });

  let exitInfo: ChildExit | undefined;
  const exited = new Promise<ChildExit>((resolve) => {
    const finish = (info: ChildExit): void => {
      if (exitInfo) return;
      exitInfo = info;
      live.delete(proc);
      resolve(info);
      for (const l of [...listeners]) l();
    };
    proc.once('exit', (code, signal) => finish({ code, signal }));
    proc.once('error', (err) => {
      collect(Buffer.from(`\n[spawnChild] ${err.stack ?? err.message}\n`));
      if (proc.exitCode === null && proc.signalCode === null && !proc.pid) finish({ code: null, signal: null });
    });
  });
  // stdio may still flush after 'exit'; 'close' fires once it has (bounded wait where used).
  const closed = new Promise<void>((resolve) => proc.once('close', () => resolve()));

  const waitForMessage = (predicate: (m: any) => boolean, timeoutMs = 10_000): Promise<any> =>
    new Promise<any>((resolve, reject) => {
      let done = false;
      let draining = false;
      const find = (): { m: any } | undefined => {
        const i = messages.findIndex((m) => predicate(m));
        return i >= 0 ? { m: messages[i] } : undefined;
      };
      const finish = (settle: () => void): void => {
        if (done) return;
        done = true;
        listeners.delete(check);
        clearTimeout(timer);
        settle();
      };
      const failure = (why: string): Error =>
        new Error(`${why} (child ${path.relative(REPO_ROOT, script)}, pid ${proc.pid}). Output tail:\n${tail(out)}`);
      function check(): void {
        if (done || draining) return;
        let found: { m: any } | undefined;
        try {
          found = find();
        } catch (err) {
          return finish(() => reject(err));
        }
        if (found) return finish(() => resolve(found.m));
        if (!exitInfo) return;
        const info = exitInfo;
        draining = true; // give stdio / late IPC messages a moment to arrive
        void Promise.race([closed, new Promise((r) => setTimeout(r, 200))]).then(() => {
          let late: { m: any } | undefined;
          try {
            late = find();
          } catch {
            /* reported as the exit below */
          }
          if (late) finish(() => resolve(late.m));
          else finish(() => reject(failure(`child exited (code ${info.code}, signal ${info.signal}) before the awaited message`)));
        });
      }
      const timer = setTimeout(
        () => finish(() => reject(failure(`timed out after ${timeoutMs}ms waiting for a message`))),
        timeoutMs,
      );
      listeners.add(check);
      check();
    });

  return {
    get pid(): number {
      return proc.pid ?? -1;
    },
    messages,
    waitForMessage,
    send(msg: unknown): void {
      if (!proc.connected) throw new Error(`child ${proc.pid} IPC channel is closed`);
      proc.send(msg as Parameters<ChildProcess['send']>[0]);
    },
    kill(signal: NodeJS.Signals = 'SIGKILL'): void {
      if (exitInfo || !proc.pid) return;
      try {
        process.kill(proc.pid, signal);
      } catch {
        /* already gone */
      }
    },
    exited,
    output: () => out,
  };
}

/** SIGKILLs every child spawned by this module that is still running and waits (≤5s) for them. */
export async function killAllChildren(): Promise<void> {
  const procs = [...live];
  await Promise.all(
    procs.map(
      (proc) =>
        new Promise<void>((resolve) => {
          if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
          const timer = setTimeout(resolve, 5000);
          proc.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          try {
            if (proc.pid) process.kill(proc.pid, 'SIGKILL');
          } catch {
            clearTimeout(timer);
            resolve();
          }
        }),
    ),
  );
}
