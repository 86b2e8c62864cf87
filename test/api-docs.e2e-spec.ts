/**
 * The API reference (`npm run docs`, TypeDoc, configured by `typedoc.json`) builds without a warning: every
 * exported declaration of both entry points (`nestjs-distributed-queue` and `nestjs-distributed-queue/testing`),
 * members of exported classes and interfaces included, has a JSDoc comment (`validation.notDocumented`), and no
 * documented signature refers to a type the package does not export (`validation.notExported`).
 * Runs TypeDoc as `npm run docs` does, with `--emit none` (nothing is written).
 * Needs no Redis: it is in the e2e project because it compiles the whole library (several seconds).
 */
import { execFile } from 'child_process';
import * as path from 'path';

const ROOT = path.resolve(__dirname, '..');
/** The CLI `npm run docs` runs (its package exports no `bin/` path to resolve). */
const TYPEDOC = path.join(ROOT, 'node_modules', 'typedoc', 'bin', 'typedoc');

/** Runs TypeDoc; resolves its exit code and output (colours off, one message a line). */
function runTypedoc(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath, [TYPEDOC, ...args],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' }, maxBuffer: 16 * 1024 * 1024, timeout: 50_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}`.replace(/\x1b\[[0-9;]*m/g, '') });
      },
    );
  });
}

describe('API reference (TypeDoc)', () => {
  it('builds from the JSDoc without a warning', async () => {
    const { code, output } = await runTypedoc(['--options', 'typedoc.json', '--emit', 'none', '--treatWarningsAsErrors']);
    const problems = output.split('\n').filter((line) => /^\[(warning|error)\]/.test(line) && !/^\[error\] Found \d+ errors/.test(line));
    // Listed one a line, so that a failure says what to document.
    expect(problems).toEqual([]);
    expect(code).toBe(0);
  }, 60_000);
});
