import { DELIVERY_HEADER, SIGNATURE_HEADER, signDelivery, TIMESTAMP_HEADER, verifyDelivery } from './delivery-signature';

const secret = 'a-shared-secret';
const body = JSON.stringify({ type: 'order.close', id: 'o-1', attempt: 1, dueAt: 1, payload: { n: 'é' }, timeoutMs: 1000 });
const now = 1_800_000_000_000;

describe('delivery signature', () => {
  it('accepts what was signed with the same secret, naming the delivery', () => {
    const headers = signDelivery(secret, now, 'order.close:o-1:1:ab', body);
    expect(verifyDelivery(secret, headers, body, now)).toEqual({ ok: true, delivery: 'order.close:o-1:1:ab' });
    expect(headers[SIGNATURE_HEADER]).toMatch(/^v1=[0-9a-f]{64}$/);
  });

  it('refuses another secret, a changed body, a changed delivery id or timestamp', () => {
    const headers = signDelivery(secret, now, 'd1', body);
    expect(verifyDelivery('other', headers, body, now)).toEqual({ ok: false, reason: 'bad signature' });
    expect(verifyDelivery(secret, headers, body.replace('o-1', 'o-2'), now)).toEqual({ ok: false, reason: 'bad signature' });
    expect(verifyDelivery(secret, { ...headers, [DELIVERY_HEADER]: 'd2' }, body, now)).toEqual({ ok: false, reason: 'bad signature' });
    expect(verifyDelivery(secret, { ...headers, [TIMESTAMP_HEADER]: String(now + 1) }, body, now)).toEqual({ ok: false, reason: 'bad signature' });
  });

  it('refuses a timestamp outside the tolerance either way, and accepts ±30 s of clock skew', () => {
    const headers = signDelivery(secret, now, 'd1', body);
    expect(verifyDelivery(secret, headers, body, now + 30_000).ok).toBe(true);
    expect(verifyDelivery(secret, headers, body, now - 30_000).ok).toBe(true);
    expect(verifyDelivery(secret, headers, body, now + 300_001)).toEqual({ ok: false, reason: 'stale timestamp' });
    expect(verifyDelivery(secret, headers, body, now - 300_001)).toEqual({ ok: false, reason: 'stale timestamp' });
  });

  it('refuses missing or malformed headers', () => {
    const headers = signDelivery(secret, now, 'd1', body);
    expect(verifyDelivery(secret, {}, body, now)).toEqual({ ok: false, reason: 'missing headers' });
    expect(verifyDelivery(secret, { ...headers, [TIMESTAMP_HEADER]: 'soon' }, body, now)).toEqual({ ok: false, reason: 'missing headers' });
    expect(verifyDelivery(secret, { ...headers, [SIGNATURE_HEADER]: 'v1=zz' }, body, now)).toEqual({ ok: false, reason: 'bad signature' });
    expect(verifyDelivery(secret, { ...headers, [DELIVERY_HEADER]: ['a', 'b'] }, body, now)).toEqual({ ok: false, reason: 'missing headers' });
  });
});
