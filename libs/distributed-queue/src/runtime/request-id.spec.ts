import { newRequestId, randomTaskId } from './request-id';

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
