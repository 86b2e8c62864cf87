import * as fs from 'fs';

/** Jest globalTeardown: stops the servers started by global-setup.ts (by pid) and removes the info file. */
export default async function globalTeardown(): Promise<void> {
  const state = globalThis.__DQ_TEST_REDIS__;
  if (!state) return;
  try {
    const results = await Promise.allSettled([state.single?.remove(), state.cluster?.stop()]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  } finally {
    fs.rmSync(state.file, { force: true });
    delete process.env.DQ_TEST_REDIS_FILE;
    globalThis.__DQ_TEST_REDIS__ = undefined;
  }
}
