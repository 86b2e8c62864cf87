import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT, withParentDeathSignal } from './child';
import { withBuildLock } from './build-lock';

/*
 * Helpers of test/package-consumer.e2e-spec.ts: packs the library as users get it and runs it from a fresh
 * application that installs the tarball from disk and everything else from the npm registry.
 */

export const LIB_DIR = path.join(REPO_ROOT, 'libs', 'distributed-queue');
export const CONSUMER_FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'consumer');

export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

const MAX_OUTPUT = 2 * 1024 * 1024;

function tail(text: string, chars = 6000): string {
  return text.length > chars ? '…' + text.slice(-chars) : text;
}

/** Every process started by `run` or `startConsumerApp` that has not exited yet. */
const live = new Set<ChildProcess>();

/** SIGKILLs (by pid, or by the process group a `run` command leads) what this module started and is still running. */
export function killStarted(): void {
  for (const proc of live) {
    if (!proc.pid) continue;
    try {
      process.kill((proc as ChildProcess & { group?: boolean }).group ? -proc.pid : proc.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

/**
 * The environment for npm in a folder outside the repository: without the npm_* variables that `npm test`
 * exports (npm_config_local_prefix, npm_config_prefix, npm_package_*, ...), which would point npm back at
 * the repository. The user's npm configuration (registry, cache, proxy: ~/.npmrc) still applies.
 */
export function npmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const drop = /^(npm_(package|lifecycle)_|npm_command$|npm_execpath$|npm_node_execpath$|init_cwd$|npm_config_(local_prefix|prefix|global_prefix|workspaces?|include_workspace_root|call|argv|user_agent|npm_version|node_gyp|save|lockfile_version)$)/i;
  for (const [key, value] of Object.entries(process.env)) if (!drop.test(key)) env[key] = value;
  return { ...env, ...extra };
}

export interface RunOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Budget; on expiry the command's whole process group is SIGKILLed and the promise rejects. */
  timeoutMs: number;
}

/**
 * Runs a command to completion, output collected. Rejects on a non-zero exit (with the output's tail) or
 * when `timeoutMs` passes. The command leads its own process group, so a timeout also kills what it
 * started (npm's children).
 */
export function run(command: string, args: string[], options: RunOptions): Promise<CommandResult> {
  const started = Date.now();
  const label = `${command} ${args.join(' ')} (in ${options.cwd})`;
  return new Promise<CommandResult>((resolve, reject) => {
    const [cmd, argv] = withParentDeathSignal(command, args);
    const proc = spawn(cmd, argv, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    }) as ChildProcess & { group?: boolean };
    proc.group = true;
    live.add(proc);
    let stdout = '';
    let stderr = '';
    proc.stdout?.on('data', (c: Buffer) => (stdout = (stdout + c.toString('utf8')).slice(-MAX_OUTPUT)));
    proc.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-MAX_OUTPUT)));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (proc.pid) process.kill(-proc.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, options.timeoutMs);
    proc.once('error', (error) => {
      clearTimeout(timer);
      live.delete(proc);
      reject(new Error(`${label} could not start: ${error.message}`));
    });
    proc.once('close', (code, signal) => {
      clearTimeout(timer);
      live.delete(proc);
      const result = { code, signal, stdout, stderr, ms: Date.now() - started };
      if (timedOut) reject(new Error(`${label} did not finish within ${options.timeoutMs} ms\n${tail(stdout + stderr)}`));
      else if (code !== 0) reject(new Error(`${label} failed (code ${code}, signal ${signal})\nstdout:\n${tail(stdout)}\nstderr:\n${tail(stderr)}`));
      else resolve(result);
    });
  });
}

// ---------------------------------------------------------------- the tarball

export interface PackedLibrary {
  tarball: string;
  /** Paths inside the tarball without the leading `package/`. */
  files: string[];
  bytes: number;
}

/** `npm run build -w nestjs-distributed-queue` from the repo root, then `npm pack` into `dest`. */
export async function buildAndPack(dest: string): Promise<PackedLibrary> {
  const env = npmEnv();
  const packed = await withBuildLock(async () => {
    await run('npm', ['run', 'build', '-w', 'nestjs-distributed-queue'], { cwd: REPO_ROOT, env, timeoutMs: 180_000 });
    return run('npm', ['pack', '--pack-destination', dest, '--json', '--loglevel=error'], { cwd: LIB_DIR, env, timeoutMs: 120_000 });
  });
  const json = packed.stdout.slice(packed.stdout.indexOf('['));
  const [info] = JSON.parse(json) as { filename: string }[];
  const tarball = path.join(dest, info.filename);
  const listing = await run('tar', ['-tzf', tarball], { cwd: dest, timeoutMs: 30_000 });
  const files = listing.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => line.replace(/^package\//, ''));
  return { tarball, files, bytes: fs.statSync(tarball).size };
}

/** Files under `dir` (relative, '/'-separated), recursively. */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (sub: string): void => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else out.push(rel);
    }
  };
  walk('');
  return out.sort();
}

/**
 * What the tarball must hold, from the library's sources: for every `src/**\/*.ts` (not a spec) its
 * `dist/**\/*.js` and `.d.ts`, every Lua script under `dist/scripts`, the dashboard's bundled assets under
 * `dist/dashboard/assets`, and package.json, README.md and LICENSE.
 */
export function expectedPackageFiles(): string[] {
  const src = path.join(LIB_DIR, 'src');
  const expected = ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'];
  // NOTE: the guides the README links to (scripts/package-readme.js copies docs/*.md at build)
  for (const file of fs.readdirSync(path.join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md'))) expected.push(`docs/${file}`);
  for (const file of listFiles(src)) {
    if (file.endsWith('.lua') && file.startsWith('scripts/')) expected.push(`dist/${file}`);
    else if (file.startsWith('dashboard/assets/')) expected.push(`dist/${file}`);
    else if (file.endsWith('.ts') && !file.endsWith('.d.ts') && !/\.(spec|test)\.ts$/.test(file)) {
      const base = file.slice(0, -'.ts'.length);
      expected.push(`dist/${base}.js`, `dist/${base}.d.ts`);
    }
  }
  return expected.sort();
}

/** Why a packed path must not be there, or undefined when it may. */
export function forbiddenReason(file: string): string | undefined {
  if (/(^|\/)node_modules\//.test(file)) return 'node_modules';
  if (file.endsWith('.ts') && !file.endsWith('.d.ts')) return 'TypeScript source';
  if (/(^|\/)(test|tests|__tests__|fixtures)\//.test(file) || /\.(spec|test|e2e-spec)\.(js|ts|d\.ts)$/.test(file)) return 'test';
  if (!/^(package\.json|README\.md|CHANGELOG\.md|LICENSE|docs\/[\w.-]+\.md|dist\/.+\.(js|d\.ts|lua)|dist\/dashboard\/assets\/[\w.-]+\.(js|css))$/.test(file)) {
    return 'not in the allowed set (package.json, README.md, CHANGELOG.md, LICENSE, docs/*.md, dist/**/*.{js,d.ts,lua}, dist/dashboard/assets/*.{js,css})';
  }
  return undefined;
}

// ---------------------------------------------------------------- consumer applications

export interface ConsumerVariant {
  /** Folder under test/fixtures/consumer holding its package.json. */
  name: string;
  /** Expected majors of what gets installed. */
  majors: Record<string, number>;
  /** The compiled application's module format (package.json "type"). */
  format: 'commonjs' | 'esm';
}

/**
 * Creates an application in `dir`: the shared sources of test/fixtures/consumer/app, and the variant's
 * package.json plus a dependency on the tarball.
 */
export function createConsumerApp(dir: string, variant: ConsumerVariant, tarball: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.cpSync(path.join(CONSUMER_FIXTURES, 'app'), dir, { recursive: true });
  const manifest = JSON.parse(fs.readFileSync(path.join(CONSUMER_FIXTURES, variant.name, 'package.json'), 'utf8'));
  manifest.dependencies = { ...manifest.dependencies, 'nestjs-distributed-queue': `file:${tarball}` };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
}

/** Installs an application's dependencies from the registry (and the tarball from disk). */
export function npmInstall(dir: string, cache: string | undefined, timeoutMs: number): Promise<CommandResult> {
  const args = ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=warn'];
  if (cache) args.push('--cache', cache);
  return run('npm', args, { cwd: dir, env: npmEnv(), timeoutMs });
}

/**
 * Every installed copy of `name` under `root`/node_modules, nested ones included (paths relative to root).
 * Follows no symlinks.
 */
export function installedCopies(root: string, name: string): string[] {
  const found: string[] = [];
  const visit = (nodeModules: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(nodeModules, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name === '.bin' || entry.name === '.cache') continue;
      const dirs = entry.name.startsWith('@')
        ? fs.readdirSync(path.join(nodeModules, entry.name), { withFileTypes: true })
            .filter((e) => e.isDirectory())
            .map((e) => `${entry.name}/${e.name}`)
        : [entry.name];
      for (const pkg of dirs) {
        const pkgDir = path.join(nodeModules, pkg);
        if (pkg === name && fs.existsSync(path.join(pkgDir, 'package.json'))) found.push(path.relative(root, pkgDir));
        visit(path.join(pkgDir, 'node_modules'));
      }
    }
  };
  visit(path.join(root, 'node_modules'));
  return found.sort();
}

/** The version in `<root>/node_modules/<name>/package.json`. */
export function installedVersion(root: string, name: string): string {
  return JSON.parse(fs.readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
}

/** The modules a compiled file loads (string literals of `require(...)`, `import ... from` and `import '...'`). */
export function loadedModules(jsFile: string): { format: 'commonjs' | 'esm'; modules: string[] } {
  const source = fs.readFileSync(jsFile, 'utf8');
  const required = [...source.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]);
  const imported = [...source.matchAll(/^\s*(?:import|export)\s+(?:[^'";\n]*?\s+from\s+)?["']([^"']+)["']/gm)].map((m) => m[1]);
  if (required.length && imported.length) throw new Error(`${jsFile} both requires and imports`);
  return { format: imported.length ? 'esm' : 'commonjs', modules: [...new Set([...required, ...imported])].sort() };
}

// ---------------------------------------------------------------- running an application

export interface ConsumerEvent {
  event: string;
  [key: string]: unknown;
}

export interface ConsumerProcess {
  readonly pid: number;
  readonly events: ConsumerEvent[];
  /** Resolves with the first `DQ-CONSUMER` event named `name`; rejects on exit or after `timeoutMs`. */
  waitForEvent(name: string, timeoutMs: number): Promise<ConsumerEvent>;
  /** Resolves with the exit, or with undefined when it has not exited within `timeoutMs`. */
  waitForExit(timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null } | undefined>;
  signal(signal: NodeJS.Signals): void;
  output(): string;
}

const EVENT_PREFIX = 'DQ-CONSUMER ';

/** Starts `node dist/main.js` in `dir`; it prints `DQ-CONSUMER {json}` lines (test/fixtures/consumer/app). */
export function startConsumerApp(dir: string, env: Record<string, string>): ConsumerProcess {
  const [cmd, args] = withParentDeathSignal(process.execPath, [path.join(dir, 'dist', 'main.js')]);
  const proc = spawn(cmd, args, { cwd: dir, env: { ...npmEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(proc);
  let out = '';
  let pendingLine = '';
  const events: ConsumerEvent[] = [];
  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const l of [...listeners]) l();
  };
  proc.stdout?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    out = (out + text).slice(-MAX_OUTPUT);
    pendingLine += text;
    const lines = pendingLine.split('\n');
    pendingLine = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith(EVENT_PREFIX)) continue;
      try {
        events.push(JSON.parse(line.slice(EVENT_PREFIX.length)) as ConsumerEvent);
      } catch {
        events.push({ event: 'unparsable', line });
      }
    }
    notify();
  });
  proc.stderr?.on('data', (chunk: Buffer) => (out = (out + chunk.toString('utf8')).slice(-MAX_OUTPUT)));
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('error', (error) => {
      out += `\n[startConsumerApp] ${error.message}\n`;
      exit = { code: null, signal: null };
      live.delete(proc);
      resolve(exit);
      notify();
    });
    // 'close': the exit and all of stdout (the last events) are in.
    proc.once('close', (code, signal) => {
      exit = { code, signal };
      live.delete(proc);
      resolve(exit);
      notify();
    });
  });

  return {
    get pid() {
      return proc.pid ?? -1;
    },
    events,
    waitForEvent(name, timeoutMs) {
      return new Promise<ConsumerEvent>((resolve, reject) => {
        const finish = (settle: () => void): void => {
          listeners.delete(check);
          clearTimeout(timer);
          settle();
        };
        const failure = (why: string): Error => new Error(`${why} (consumer app in ${dir}, pid ${proc.pid}). Output:\n${tail(out)}`);
        function check(): void {
          const failed = events.find((e) => e.event === 'failed');
          const found = events.find((e) => e.event === name);
          if (found) return finish(() => resolve(found));
          if (failed) return finish(() => reject(failure(`the app failed: ${String(failed.error)}`)));
          if (exit) return finish(() => reject(failure(`the app exited (code ${exit?.code}, signal ${exit?.signal}) before "${name}"`)));
        }
        const timer = setTimeout(() => finish(() => reject(failure(`no "${name}" event within ${timeoutMs} ms`))), timeoutMs);
        listeners.add(check);
        check();
      });
    },
    waitForExit(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      return Promise.race([
        exited,
        new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs))),
      ]).finally(() => clearTimeout(timer));
    },
    signal(signal) {
      if (exit || !proc.pid) return;
      try {
        process.kill(proc.pid, signal);
      } catch {
        /* gone */
      }
    },
    output: () => out,
  };
}
