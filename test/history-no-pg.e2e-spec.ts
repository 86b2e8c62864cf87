/**
 * `pg` is an optional peer dependency: needed only with the `history` option.
 *
 * Failure matrix cell (docs/failure-matrix.md, section 3, "README: without the option, calls reject and `pg`
 * is not loaded"): in a child process where `pg` cannot be resolved (preload test/support/block-pg.js, which
 * also records every attempt to load it), an application without the history option starts, runs a task, its
 * history calls reject with HistoryNotConfiguredError, and nothing tried to load pg; with the option, the
 * start-up fails naming it.
 */
import * as path from 'path';
import { withTimeout } from 'nestjs-distributed-queue/runtime/with-timeout';
import { killAllChildren, REPO_ROOT, spawnChild } from './support/child';
import { getTargets, uniquePrefix } from './support/targets';

const target = getTargets()[0];

describe('without pg installed', () => {
  const preload = path.join(REPO_ROOT, 'test', 'support', 'block-pg.js');
  const run = (history: 'on' | 'off') =>
    spawnChild('test/support/no-pg-app.ts', {
      DQ_CONNECTION: JSON.stringify(target.connection), DQ_PREFIX: uniquePrefix(`hist-nopg-${history}`), DQ_HISTORY: history,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim(),
    });
  afterAll(() => killAllChildren());

  it('an application without the history option starts, runs a task and never loads pg', async () => {
    const child = run('off');
    expect(await child.waitForMessage((m) => m.type === 'probe', 30_000)).toEqual({ type: 'probe', pg: false });
    const ran = await child.waitForMessage((m) => m.type === 'ran' || m.type === 'start-failed', 30_000);
    expect(ran).toMatchObject({ type: 'ran', rowError: 'HistoryNotConfiguredError', pgRequests: [] });
    expect(ran.id).toBe(ran.submitted);
    expect((await withTimeout(child.exited, 15_000, 'the child exits')).code).toBe(0);
  });

  it('an application with the history option fails at start-up naming the option', async () => {
    const child = run('on');
    expect(await child.waitForMessage((m) => m.type === 'probe', 30_000)).toEqual({ type: 'probe', pg: false });
    const failed = await child.waitForMessage((m) => m.type === 'ran' || m.type === 'start-failed', 30_000);
    expect(failed).toEqual({
      type: 'start-failed', name: 'InvalidOptionsError', option: 'history',
      message: 'Invalid distributed-queue option "history": needs the pg package (npm i pg)',
    });
    expect((await withTimeout(child.exited, 15_000, 'the child exits')).code).toBe(0);
  });
});
