/**
 * Two projects:
 *  - unit: libs/**\/*.spec.ts and apps/**\/*.spec.ts, no Redis.
 *  - e2e:  test/**\/*.e2e-spec.ts; its globalSetup starts a standalone Redis and a 3-master cluster
 *          (see test/support/global-setup.ts; DQ_TEST_TARGETS=single starts only the standalone one).
 *
 * globalSetup/globalTeardown are set on the e2e project on purpose: Jest 29 runs a project's global
 * hooks only when at least one test of that project is selected, so `--selectProjects unit` (and
 * `npm run test:unit`) never starts Redis.
 */
const transform = {
  // The tsconfig object is merged over ./tsconfig.json (found from rootDir). isolatedModules: transpile
  // each file on its own (fast, no type errors reported; run `npx tsc --noEmit` for type checking).
  '^.+\\.ts$': ['ts-jest', { tsconfig: { isolatedModules: true } }],
};

const moduleNameMapper = {
  '^nestjs-distributed-queue$': '<rootDir>/libs/distributed-queue/src',
  '^nestjs-distributed-queue/(.*)$': '<rootDir>/libs/distributed-queue/src/$1',
};

const common = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform,
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper,
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/libs/distributed-queue/dist/'],
};

/** @type {import('jest').Config} */
module.exports = {
  // NOTE: the e2e files mostly wait (leases, heartbeats, outages, child processes starting): with 2 workers
  // the CPUs of the 2-core machine stood mostly idle and the suite took 16 min. With 212 files: 3 workers
  // 1,041 s, 4 workers 835 s, 5 workers 773 s but more than a fifth more work per file (waiting on the CPU).
  // With 257 files (2026-11-28, the same hour): 4 workers 670 s with the CPUs 40 % idle (vmstat), 5 workers
  // 582 s, 25 % idle, 9 % more work per file. CI ran 4 workers in 1,071 s on a loaded machine: over its 15 min.
  maxWorkers: 5,
  // The longest files first, by test/support/durations.json (a clean clone has no timing cache of Jest's).
  testSequencer: '<rootDir>/test/support/sequencer.js',
  testTimeout: 60000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts'],
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
