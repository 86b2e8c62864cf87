import { AckDurability } from './ack-durability';
import type { DurableWrites, ReplicaAcks, WriteMark } from './durable-writes';

/** The outage bookkeeping of durable acks: what a WAIT answered decides the announcement and the log lines. */
describe('AckDurability', () => {
  const mark: WriteMark = { node: null, socket: undefined };
  const setup = (answers: ReplicaAcks[]) => {
    const writes = { confirm: jest.fn(async () => answers.shift()!) } as unknown as DurableWrites;
    const logger = { warn: jest.fn(), log: jest.fn() };
    return { acks: new AckDurability(writes, { replicas: 1, timeoutMs: 100 }, logger), logger };
  };

  it('warns once per outage, announces while the master answers, and says when replicas confirm again', async () => {
    const { acks, logger } = setup([{ acknowledged: 1 }, { acknowledged: 0 }, { acknowledged: 0 }, { acknowledged: 1 }, { acknowledged: 0 }]);
    expect(await acks.confirm(mark)).toBe(true);
    expect(logger.warn).not.toHaveBeenCalled();
    expect(await acks.confirm(mark)).toBe(true);
    expect(await acks.confirm(mark)).toBe(true);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0][0]).toMatch(/only 0 of 1 replicas acknowledged within 100 ms/);
    expect(await acks.confirm(mark)).toBe(true);
    expect(logger.log).toHaveBeenCalledTimes(1);
    expect(logger.log.mock.calls[0][0]).toMatch(/confirm again .*2 ack call\(s\) not confirmed/);
    expect(await acks.confirm(mark)).toBe(true);
    expect(logger.warn).toHaveBeenCalledTimes(2);
  });

  it('does not announce a write whose connection was lost before its WAIT answered', async () => {
    const { acks, logger } = setup([{ acknowledged: 0, reason: 'the connection to the master was lost after the write' }]);
    expect(await acks.confirm(mark)).toBe(false);
    expect(logger.warn.mock.calls[0][0]).toMatch(/connection to the master was lost/);
  });
});
