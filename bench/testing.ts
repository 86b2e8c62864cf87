import { spawnSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import type { Row } from './report';

/** One Jest run of the sample application's unit tests (apps/orders, the testing module, no Redis). */
interface JestRun {
  /** Sum of the tests' durations (each with its beforeEach/afterEach: the module built, init, closed), ms. */
  tests: number;
  /** The same for the workers' tests only (describe blocks named after a worker). */
  workers: number;
  count: number;
  /** The whole command, Jest's start and the compile (from its cache) included, ms. */
  wall: number;
}

function jestRun(root: string): JestRun {
  const dir = mkdtempSync(join(tmpdir(), 'dq-bench-testing-'));
  const out = join(dir, 'result.json');
  const t0 = performance.now();
  // NOTE: the path before --selectProjects (which takes every word after it as a project name); in band.
  const run = spawnSync('npx', ['jest', '--config', 'jest.config.js', 'apps/orders', '--selectProjects', 'unit', '-i', '--json', `--outputFile=${out}`], { cwd: root, encoding: 'utf8' });
  const wall = performance.now() - t0;
  try {
    if (run.status !== 0) throw new Error(`the sample application's unit tests failed:\n${run.stderr}`);
    const result = JSON.parse(readFileSync(out, 'utf8')) as { testResults: { assertionResults: { ancestorTitles: string[]; duration?: number; status: string }[] }[] };
    const tests = result.testResults.flatMap((file) => file.assertionResults).filter((t) => t.status === 'passed');
    const sum = (list: typeof tests): number => list.reduce((total, t) => total + (t.duration ?? 0), 0);
    const workers = tests.filter((t) => t.ancestorTitles.some((title) => /Worker\b/.test(title)));
    return { tests: sum(tests), workers: sum(workers), count: tests.length, wall };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Workload 17: the sample application's unit tests with `nestjs-distributed-queue/testing` (issue 32's
 * target: its workers' tests under a second). Jest runs them in band, three times (the first warms its
 * transform cache); the figures are the median run's. No peer: BullMQ's users test against a Redis server.
 */
export async function testingModule(quick: boolean): Promise<Row[]> {
  const root = join(__dirname, '..');
  const runs = Array.from({ length: quick ? 2 : 3 }, () => jestRun(root)).slice(1);
  const median = runs.sort((a, b) => a.workers - b.workers)[Math.floor(runs.length / 2)];
  return [{
    workload: '17 sample app unit tests (testing module)',
    system: 'this library',
    figures: {
      'worker tests ms': Math.round(median.workers),
      'all tests ms': Math.round(median.tests),
      tests: median.count,
      'jest wall s': (median.wall / 1000).toFixed(1),
    },
    key: { name: 'worker tests ms', value: median.workers, lowerIsBetter: true },
  }];
}
