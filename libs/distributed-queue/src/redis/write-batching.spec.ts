import { Socket, createServer, type AddressInfo } from 'net';
import { corkForTick } from './write-batching';

describe('corkForTick', () => {
  it('holds a socket once per tick and lets it go on the next tick', async () => {
    const calls: string[] = [];
    const socket = {
      writable: true,
      writableCorked: 0,
      cork() {
        calls.push('cork');
        this.writableCorked++;
      },
      uncork() {
        calls.push('uncork');
        this.writableCorked--;
      },
    };
    corkForTick(socket);
    corkForTick(socket);
    corkForTick(socket);
    expect(calls).toEqual(['cork']);
    await new Promise((resolve) => process.nextTick(resolve));
    expect(calls).toEqual(['cork', 'uncork']);
    corkForTick(socket);
    expect(calls).toEqual(['cork', 'uncork', 'cork']);
    await new Promise((resolve) => process.nextTick(resolve));
    expect(socket.writableCorked).toBe(0);
  });

  it('leaves alone what is not a writable socket', () => {
    expect(() => corkForTick(undefined)).not.toThrow();
    expect(() => corkForTick({})).not.toThrow();
    const closed = { writable: false, writableCorked: 0, cork: jest.fn(), uncork: jest.fn() };
    corkForTick(closed);
    expect(closed.cork).not.toHaveBeenCalled();
  });

  it('sends what a tick wrote on a real socket, in order, and nothing is held after it', async () => {
    const received: Buffer[] = [];
    const server = createServer((peer) => peer.on('data', (chunk) => received.push(chunk)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const socket = new Socket();
    await new Promise<void>((resolve) => socket.connect((server.address() as AddressInfo).port, '127.0.0.1', resolve));
    for (let i = 0; i < 100; i++) {
      corkForTick(socket);
      socket.write(`${i};`);
    }
    expect(socket.writableCorked).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(socket.writableCorked).toBe(0);
    expect(Buffer.concat(received).toString()).toBe(Array.from({ length: 100 }, (_, i) => `${i};`).join(''));
    socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
});
