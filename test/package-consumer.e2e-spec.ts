/**
 * The library as users get it: built, packed with `npm pack`, installed from the tarball into fresh
 * applications whose other dependencies come from the npm registry (Nest 11 + ioredis 5 + TypeScript 5, a
 * CommonJS app; Nest 12 + ioredis 6 + TypeScript 7, an ES module app), compiled with `tsc --strict` and run
 * with node against a redis-server started here; its unit test of a worker with the testing entry point
 * (`nestjs-distributed-queue/testing`) runs without Redis and exits by itself. Fails when the tarball misses a file or holds one it
 * should not, when an application's tree gets a second copy of a peer (@nestjs/core, ...), when the
 * typings do not compile, when a task does not run, or when the app does not exit 0 soon after SIGTERM.
 *
 * Needs the npm registry (or a warm npm cache: installs run with --prefer-offline). Without network, skip
 * it with DQ_SKIP_CONSUMER=1. DQ_CONSUMER_NPM_CACHE=<dir> sets the npm cache (default: npm's own, shared
 * with every other install on the machine, so that later runs install from disk).
 *
 * Fixtures: test/fixtures/consumer/app (sources and tsconfig shared by both applications),
 * test/fixtures/consumer/nest11 and nest12 (their package.json).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  buildAndPack, createConsumerApp, expectedPackageFiles, forbiddenReason, installedCopies, installedVersion,
  killStarted, loadedModules, npmEnv, npmInstall, run, startConsumerApp, type CommandResult, type ConsumerVariant,
  type PackedLibrary,
} from './support/consumer';
import { startRedisServer, type RedisServerHandle } from './support/redis-server';

const SKIP = process.env.DQ_SKIP_CONSUMER === '1';

const VARIANTS: ConsumerVariant[] = [
  { name: 'nest11', format: 'commonjs', majors: { '@nestjs/common': 11, '@nestjs/core': 11, '@nestjs/schedule': 6, ioredis: 5 } },
  { name: 'nest12', format: 'esm', majors: { '@nestjs/common': 12, '@nestjs/core': 12, '@nestjs/schedule': 12, ioredis: 6 } },
];

/** Packages that must exist once in an application's tree: the library's peers and the library. */
const SINGLE_COPY = ['@nestjs/common', '@nestjs/core', '@nestjs/schedule', 'ioredis', 'reflect-metadata', 'rxjs', 'nestjs-distributed-queue'];
const REPORTED = [...SINGLE_COPY, 'typescript', '@types/node'];

const DELAY_MS = 300;
const ORDERED = 5;

(SKIP ? describe.skip : describe)('the packed library in a fresh application (DQ_SKIP_CONSUMER=1 skips)', () => {
  let work: string;
  let packed: PackedLibrary;
  let redis: RedisServerHandle;
  const installs = new Map<string, Promise<CommandResult>>();
  const started = Date.now();

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'dq-consumer-'));
    const [pack, server] = await Promise.allSettled([buildAndPack(work), startRedisServer()]);
    if (server.status === 'fulfilled') redis = server.value;
    if (pack.status === 'rejected') throw pack.reason;
    if (server.status === 'rejected') throw server.reason;
    packed = pack.value;
    process.stderr.write(`[consumer] packed ${path.basename(packed.tarball)}: ${packed.files.length} files, ${packed.bytes} bytes (${Date.now() - started} ms)\n`);

    // Both installs run side by side; each test awaits its own (a rejection is reported by that test).
    const cache = process.env.DQ_CONSUMER_NPM_CACHE || undefined;
    for (const variant of VARIANTS) {
      const dir = path.join(work, variant.name);
      createConsumerApp(dir, variant, packed.tarball);
      const install = npmInstall(dir, cache, 180_000);
      install.catch(() => undefined);
      installs.set(variant.name, install);
    }
  }, 240_000);

  afterAll(async () => {
    killStarted();
    await Promise.allSettled([...installs.values()]);
    await redis?.remove();
    if (work) fs.rmSync(work, { recursive: true, force: true });
    process.stderr.write(`[consumer] done in ${Date.now() - started} ms\n`);
  }, 60_000);

  it('the tarball holds the compiled library, its typings and Lua scripts, and nothing else', () => {
    const files = new Set(packed.files);
    for (const required of ['package.json', 'dist/index.js', 'dist/index.d.ts']) expect(files).toContain(required);
    for (const folder of ['delay', 'route', 'includes']) {
      expect(packed.files.filter((f) => f.startsWith(`dist/scripts/${folder}/`) && f.endsWith('.lua')).length).toBeGreaterThan(0);
    }
    // Every source file's output, every Lua script, package.json and LICENSE.
    const missing = expectedPackageFiles().filter((f) => !files.has(f));
    expect(missing).toEqual([]);

    const forbidden = packed.files.map((f) => [f, forbiddenReason(f)]).filter(([, why]) => why !== undefined);
    expect(forbidden).toEqual([]);

    // A compiled file with no source is left over from an earlier build (tsc does not empty dist).
    const expected = new Set(expectedPackageFiles());
    const stale = packed.files.filter((f) => f.startsWith('dist/') && !expected.has(f));
    expect(stale).toEqual([]);

    const manifest = JSON.parse(fs.readFileSync(path.join(work, 'nest11', 'package.json'), 'utf8'));
    expect(manifest.dependencies['nestjs-distributed-queue']).toBe(`file:${packed.tarball}`);
  });

  describe.each(VARIANTS)('$name', (variant) => {
    it(`installs with one copy of each peer, compiles with tsc --strict, runs a delayed and an ordered task, exits 0 on SIGTERM`, async () => {
      const dir = path.join(work, variant.name);
      const install = await installs.get(variant.name)!;
      process.stderr.write(`[consumer] ${variant.name}: npm install ${install.ms} ms\n`);

      // The tree: one copy of each peer (a nested @nestjs/core would give the library its own DI container
      // tokens), in the expected majors, and npm sees no problem (invalid or missing peers).
      for (const name of SINGLE_COPY) expect({ name, copies: installedCopies(dir, name) }).toEqual({ name, copies: [`node_modules/${name}`] });
      const versions = Object.fromEntries(REPORTED.map((name) => [name, installedVersion(dir, name)]));
      process.stderr.write(`[consumer] ${variant.name}: ${JSON.stringify(versions)}\n`);
      for (const [name, major] of Object.entries(variant.majors)) expect({ name, major: Number(versions[name].split('.')[0]) }).toEqual({ name, major });
      expect(fs.existsSync(path.join(dir, 'node_modules', 'nestjs-distributed-queue', 'node_modules'))).toBe(false);
      const ls = await run('npm', ['ls', '@nestjs/core', '--all', '--json'], { cwd: dir, env: npmEnv(), timeoutMs: 60_000 });
      const tree = JSON.parse(ls.stdout);
      expect(tree.problems ?? []).toEqual([]);
      const coreVersions = new Set<string>();
      const walk = (deps: Record<string, { version?: string; dependencies?: object }> | undefined): void => {
        for (const [name, node] of Object.entries(deps ?? {})) {
          if (name === '@nestjs/core' && node.version) coreVersions.add(node.version);
          walk(node.dependencies as typeof deps);
        }
      };
      walk(tree.dependencies);
      expect([...coreVersions]).toEqual([versions['@nestjs/core']]);

      // Compile: strict, decorators with metadata, the library's and Nest's typings checked (no skipLibCheck).
      const tsc = path.join(dir, 'node_modules', '.bin', 'tsc');
      await run(tsc, ['-p', 'tsconfig.json', '--strict'], { cwd: dir, timeoutMs: 120_000 });
      const main = path.join(dir, 'dist', 'main.js');
      expect(loadedModules(main)).toEqual({
        format: variant.format,
        modules: ['@nestjs/common', '@nestjs/core', 'nestjs-distributed-queue', 'reflect-metadata'],
      });

      // The testing entry point (`nestjs-distributed-queue/testing`): a worker's unit test without Redis, which
      // exits by itself once its module is closed.
      const tested = await run('node', [path.join(dir, 'dist', 'unit-test.js')], { cwd: dir, timeoutMs: 30_000 });
      const line = tested.stdout.split('\n').find((l) => l.startsWith('DQ-CONSUMER '));
      expect(line && JSON.parse(line.slice('DQ-CONSUMER '.length))).toEqual({
        event: 'tested', ran: 2, state: 'done', result: 'expired o-1', attempts: [1, 2], now: 31 * 60_000,
      });

      // Run: a delayed task and ordered tasks of one key, then SIGTERM.
      const app = startConsumerApp(dir, {
        REDIS_URL: redis.url,
        DQ_PREFIX: `consumer-${variant.name}-${Date.now().toString(36)}`,
        DQ_DELAY_MS: String(DELAY_MS),
        DQ_ORDERED: String(ORDERED),
      });
      try {
        const submitted = await app.waitForEvent('submitted', 30_000);
        expect(submitted.outcomes).toEqual(Array(ORDERED).fill('queued'));
        const done = await app.waitForEvent('done', 20_000);
        const delayed = done.delayed as { ranAfterMs: number; attempt: number; id: string };
        expect(delayed.id).toBe(submitted.delayedId);
        expect(delayed.attempt).toBe(1);
        // Due times are compared with the Redis clock; both clocks are this machine's (ms rounding: 5 ms).
        expect(delayed.ranAfterMs).toBeGreaterThanOrEqual(DELAY_MS - 5);
        expect(delayed.ranAfterMs).toBeLessThan(DELAY_MS + 5_000);
        expect(done.ordered).toEqual(Array.from({ length: ORDERED }, (_, i) => i + 1));

        const stopAt = Date.now();
        app.signal('SIGTERM');
        const exit = await app.waitForExit(8_000);
        const stopMs = Date.now() - stopAt;
        process.stderr.write(`[consumer] ${variant.name}: delayed task ran after ${delayed.ranAfterMs} ms; exit ${JSON.stringify(exit)} ${stopMs} ms after SIGTERM\n`);
        if (!exit) throw new Error(`the app did not exit within 8 s of SIGTERM (a timer or socket left open?). Output:\n${app.output()}`);
        expect({ exit, closed: app.events.some((e) => e.event === 'closed') }).toEqual({ exit: { code: 0, signal: null }, closed: true });
        expect(stopMs).toBeLessThan(5_000);
      } finally {
        app.signal('SIGKILL');
      }
    }, 240_000);
  });
});
