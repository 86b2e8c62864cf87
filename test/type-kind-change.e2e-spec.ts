/**
 * A type that changes kind between deployments (docs/production.md, "Changing a type's kind"): what the earlier
 * kind left behind is neither lost nor silent.
 *
 * Failure matrix (single server and cluster):
 * | change | left behind | expected |
 * | delay-queue → ordered | 2 waiting (one delayed), 1 dead in the delay queue | one warning at start-up naming the type and the counts (before: none, the tasks waited unseen: `getCounts` of an ordered type counts its partitions); the tasks untouched: a deployment with the delay-queue worker runs them |
 * | delay-queue → ordered | nothing | no warning |
 * | ordered → delay-queue | 1 task in a partition | a dead letter of the route queue naming the type; re-driven once an ordered worker of the type is back, it runs |
 */
import { Logger } from '@nestjs/common';
import { useQueueApps, workerClass } from './support/queue-app';
import { routeTestOptions } from './support/route';
import { getTargets, uniquePrefix } from './support/targets';
import { waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('a type that changes kind on %s', (_n, target) => {
  const { start } = useQueueApps(target);
  let warnings: string[] = [];
  beforeEach(() => {
    warnings = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
  });
  afterEach(() => jest.restoreAllMocks());
  const stranded = () => warnings.filter((w) => w.includes('in its delay queue'));

  it('delay-queue → ordered: one warning names what the delay queue still holds; those tasks stay for a delay-queue worker', async () => {
    const keyPrefix = uniquePrefix('kind-delay');
    const v1 = await start({ connection: target.connection, keyPrefix }, [workerClass('kx', { maxAttempts: 1 }, () => {
      throw new Error('dies');
    })]);
    await v1.submit.submit('kx', 3, { id: 'c' });
    await waitFor(async () => (await v1.inspect.getCounts('kx')).dead === 1, { timeoutMs: 10_000, message: 'c dead' });
    await v1.close();
    const producer = await start({ connection: target.connection, keyPrefix, workers: false, types: { kx: {} } });
    await producer.submit.submitMany('kx', [{ id: 'a', payload: 1 }, { id: 'b', payload: 2, delay: 1000 }]);
    await producer.close();

    const ran: string[] = [];
    const v2 = await start({ connection: target.connection, keyPrefix, route: routeTestOptions('q', 'v2', 2) }, [workerClass('kx', { ordered: true }, (t) => void ran.push(t.id))]);
    expect(stranded()).toEqual([expect.stringMatching(/^Ordered type "kx" has 2 waiting, 0 running and 1 dead task\(s\) in its delay queue/)]);
    await v2.close();

    // a deployment with the delay-queue worker again runs them
    const v3 = await start({ connection: target.connection, keyPrefix }, [workerClass('kx', {}, (t) => void ran.push(t.id))]);
    await waitFor(async () => ran.includes('a') && ran.includes('b'), { timeoutMs: 10_000, message: 'the waiting tasks run' });
    expect((await v3.inspect.getCounts('kx')).dead).toBe(1);
  });

  it('delay-queue → ordered with nothing left: no warning', async () => {
    const keyPrefix = uniquePrefix('kind-empty');
    const v1 = await start({ connection: target.connection, keyPrefix }, [workerClass('ke', {}, () => undefined)]);
    await v1.submit.submit('ke', {}, { id: 'done' });
    await waitFor(async () => (await v1.inspect.getTask('ke', 'done')).state === 'done', { timeoutMs: 10_000 });
    await v1.close();
    await start({ connection: target.connection, keyPrefix, route: routeTestOptions('q', 'v2', 2) }, [workerClass('ke', { ordered: true }, () => undefined)]);
    expect(stranded()).toEqual([]);
  });

  it('ordered → delay-queue: the task left in a partition is a dead letter naming the type; re-driven under an ordered worker, it runs', async () => {
    const keyPrefix = uniquePrefix('kind-ordered');
    const route = (machine: string) => routeTestOptions('q', machine, 2);
    const v1 = await start({ connection: target.connection, keyPrefix, workers: false, route: route('v1'), types: { ko: { ordered: true }, other: { ordered: true } } });
    await v1.submit.submitOrdered('ko', 'k', { n: 1 }, { id: 'left' });
    await v1.close();
    // v2: ko is a delay-queue type; another ordered type keeps the route queue running
    const v2 = await start({ connection: target.connection, keyPrefix, route: route('v2') }, [
      workerClass('ko', {}, () => undefined), workerClass('other', { ordered: true }, () => undefined),
    ]);
    const letters = await waitFor(async () => {
      const dead = await v2.inspect.listOrderedDead();
      return dead.length > 0 ? dead : undefined;
    }, { timeoutMs: 10_000, message: 'the left task dead-lettered' });
    expect(letters).toEqual([expect.objectContaining({ id: 'left', type: 'ko', key: 'k', error: expect.objectContaining({ message: expect.stringContaining('no ordered @TaskWorker for type "ko"') }) })]);
    await v2.close();
    const ran: string[] = [];
    const v3 = await start({ connection: target.connection, keyPrefix, route: route('v3') }, [workerClass('ko', { ordered: true }, (t) => void ran.push(t.id))]);
    expect(await v3.inspect.redriveOrderedDead()).toBe(1);
    await waitFor(async () => ran.includes('left'), { timeoutMs: 10_000, message: 'the re-driven task runs' });
  });
});
