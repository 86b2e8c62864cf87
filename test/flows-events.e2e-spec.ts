/**
 * Flow end events (issue 30, item 4), single server and cluster:
 * | capability            | cell                                                                          |
 * |-----------------------|-------------------------------------------------------------------------------|
 * | local listeners       | the instance whose worker ran the last node hears `completed` once; another   |
 * |                       | instance's local listener hears nothing                                       |
 * | fleet listeners       | every following instance hears each end once (completed, failed, cancelled)  |
 * | removal               | a removed fleet listener hears nothing more                                   |
 */
import 'reflect-metadata';
import { TaskFlowService, type FlowEndedEvent } from 'nestjs-distributed-queue';
import { useQueueApps, workerClass } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('flow end events on %s', (_name, target: RedisTarget) => {
  const { start } = useQueueApps(target);

  it('local: the instance that ended the flow; fleet: every follower, once per end', async () => {
    const prefix = uniquePrefix('flow-events');
    const Ok = workerClass('fe.ok', { pollIntervalMs: 100 }, () => 1);
    const Bad = workerClass('fe.bad', { pollIntervalMs: 100, maxAttempts: 1 }, () => {
      throw new Error('no');
    });
    const worker = await start({ connection: target.connection, keyPrefix: prefix }, [Ok, Bad]);
    const other = await start({ connection: target.connection, keyPrefix: prefix, workers: false, types: { 'fe.ok': {}, 'fe.bad': {} } }, []);
    const [wf, of] = [worker.app.get(TaskFlowService), other.app.get(TaskFlowService)];
    const heard = { workerLocal: [] as FlowEndedEvent[], otherLocal: [] as FlowEndedEvent[], otherFleet: [] as FlowEndedEvent[], workerFleet: [] as FlowEndedEvent[] };
    wf.onFlowEnded((e) => void heard.workerLocal.push(e));
    of.onFlowEnded((e) => void heard.otherLocal.push(e));
    const stopOther = await of.followFlowEnds((e) => void heard.otherFleet.push(e));
    await wf.followFlowEnds((e) => void heard.workerFleet.push(e));

    const done = await of.submitFlow([{ ref: 'a', type: 'fe.ok', payload: {} }, { ref: 'b', type: 'fe.ok', payload: {}, dependsOn: ['a'] }]);
    const failed = await of.submitFlow([{ ref: 'a', type: 'fe.bad', payload: {} }, { ref: 'b', type: 'fe.ok', payload: {}, dependsOn: ['a'] }]);
    const cancelled = await of.submitFlow([{ ref: 'a', type: 'fe.ok', payload: {}, delay: 60_000 }]);
    await of.cancelFlow(cancelled.id);
    await waitFor(() => heard.otherFleet.length === 3 && heard.workerFleet.length === 3, { timeoutMs: 10_000 });
    await sleep(300);
    const ends = (list: FlowEndedEvent[]): string[] => list.map((e) => `${e.flowId}:${e.state}`).sort();
    const all = [`${done.id}:completed`, `${failed.id}:failed`, `${cancelled.id}:cancelled`].sort();
    expect(ends(heard.otherFleet)).toEqual(all);
    expect(ends(heard.workerFleet)).toEqual(all);
    expect(ends(heard.workerLocal)).toEqual([`${done.id}:completed`, `${failed.id}:failed`].sort());
    expect(ends(heard.otherLocal)).toEqual([`${cancelled.id}:cancelled`]);

    await stopOther();
    const later = await of.submitFlow([{ ref: 'a', type: 'fe.ok', payload: {} }]);
    await waitFor(() => heard.workerFleet.length === 4, { timeoutMs: 10_000 });
    await sleep(300);
    expect(heard.workerFleet[3].flowId).toBe(later.id);
    expect(heard.otherFleet).toHaveLength(3);
  });
});
