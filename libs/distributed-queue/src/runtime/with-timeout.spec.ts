import { withTimeout } from './with-timeout';

describe('withTimeout', () => {
  it('settles as the promise does when it is in time', async () => {
    await expect(withTimeout(Promise.resolve(7), 1000, 'x')).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error('boom')), 1000, 'x')).rejects.toThrow('boom');
  });

  it('rejects naming what was late when the promise is not', async () => {
    const started = Date.now();
    await expect(withTimeout(new Promise(() => undefined), 50, 'PING')).rejects.toThrow('PING: no reply within 50 ms');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
