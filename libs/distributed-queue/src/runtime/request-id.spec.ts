import { moveRequestId, newRequestId, randomTaskId, REQUEST_BUCKET_MS, requestBucket } from './request-id';

describe('ids', () => {
  it('randomTaskId gives 96-bit base64url ids, distinct across many pool refills', () => {
    const ids = Array.from({ length: 5000 }, () => randomTaskId());
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('newRequestId never repeats in a process', () => {
    const ids = Array.from({ length: 1000 }, () => newRequestId());
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('request buckets', () => {
  it('a fresh id names the bucket of the second it was made in, whenever it is asked', () => {
    const before = Math.floor(Date.now() / REQUEST_BUCKET_MS);
    const id = newRequestId();
    const after = Math.floor(Date.now() / REQUEST_BUCKET_MS);
    const bucket = Number(requestBucket(id));
    expect(bucket).toBeGreaterThanOrEqual(before);
    expect(bucket).toBeLessThanOrEqual(after);
    // A repeat a minute later (a retried RPC) looks in the same bucket; so do a split call's parts.
    expect(requestBucket(id, Date.now() + 60_000)).toBe(String(bucket));
    expect(requestBucket(`${id}.3`)).toBe(String(bucket));
  });

  it("a move's id is anchored at its task's due time: every mover of that task names the same bucket", () => {
    const dueAt = 1_790_000_123_456;
    expect(requestBucket(moveRequestId(dueAt, '#1f.x'), 0)).toBe(String(Math.floor(dueAt / REQUEST_BUCKET_MS)));
    expect(requestBucket(moveRequestId(0, 'a'), 5_000_000)).toBe('0');
  });

  it('an id without an anchor (an earlier version, in service mode) goes to the bucket of now', () => {
    for (const id of ['Zk3_-abc0', 'ABCDEF.x', 'abcdefghij.x', '.x', '']) {
      expect(requestBucket(id, 7_654_321)).toBe(String(Math.floor(7_654_321 / REQUEST_BUCKET_MS)));
    }
  });
});
