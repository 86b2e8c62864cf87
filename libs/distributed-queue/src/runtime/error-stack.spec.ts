import { DeliveryFailedError } from '../errors';
import { boundedMessage, boundedStack, MAX_MESSAGE_BYTES, MAX_STACK_BYTES, stackOf, withStack } from './error-stack';
import { toError } from './handler-call';

const frames = (n: number) => Array.from({ length: n }, (_, i) => `    at frame${i} (/app/src/file${i}.ts:${i}:1)`);

describe('boundedStack', () => {
  it('keeps a stack within the bound as it is, and gives undefined for no stack', () => {
    const stack = ['Error: boom', ...frames(10)].join('\n');
    expect(boundedStack(stack)).toBe(stack);
    expect(boundedStack(undefined)).toBeUndefined();
    expect(boundedStack('')).toBeUndefined();
    expect(boundedStack(42)).toBeUndefined();
  });

  it('cuts a huge stack after whole lines, within the bound, and says how many lines were cut', () => {
    const lines = ['Error: boom', ...frames(5000)];
    const out = boundedStack(lines.join('\n'))!;
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(MAX_STACK_BYTES);
    const kept = out.split('\n');
    const last = kept.pop()!;
    expect(kept).toEqual(lines.slice(0, kept.length));
    expect(kept.length).toBeGreaterThan(40);
    expect(last).toBe(`    ... ${lines.length - kept.length} more lines`);
  });

  it('counts bytes, not characters: multi-byte lines stay within the bound', () => {
    const lines = ['Error: ünïcödé 😀', ...Array.from({ length: 2000 }, (_, i) => `    at 函数${i} (/应用/文件.ts:1:1)`)];
    const out = boundedStack(lines.join('\n'))!;
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(MAX_STACK_BYTES);
    expect(out.startsWith(lines[0])).toBe(true);
  });

  it('cuts inside a first line longer than the bound (a huge message), never splitting a character', () => {
    const out = boundedStack(`Error: ${'😀'.repeat(10_000)}\n${frames(3).join('\n')}`)!;
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(MAX_STACK_BYTES);
    expect(out).not.toContain('\uFFFD');
    expect(out.split('\n')[1]).toBe('    ... line cut, 3 more lines');
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(out)).toBe(false);
  });
});

describe('stackOf', () => {
  it("is an Error's stack, none for a thrown value that was not an Error, the application's for a failed delivery", () => {
    const error = new Error('boom');
    expect(stackOf(error)).toBe(error.stack);
    expect(stackOf(toError('a string'))).toBeUndefined();
    expect(stackOf(toError({ code: 1 }))).toBeUndefined();
    expect(stackOf(new DeliveryFailedError('app', 'i1', 500, 'Error: boom', 'Error: boom\n    at remote (/app.ts:1:1)'))).toBe(
      'Error: boom\n    at remote (/app.ts:1:1)',
    );
    expect(stackOf(new DeliveryFailedError('app', 'i1', 0, 'no answer'))).toBeUndefined();
  });

  it('withStack puts the stack on the lines under the text, and leaves the text alone without one', () => {
    expect(withStack('failed', 'Error: x\n    at f')).toBe('failed\nError: x\n    at f');
    expect(withStack('failed', undefined)).toBe('failed');
  });
});

describe('boundedMessage', () => {
  it('keeps a message within the bound whole, and cuts a longer one to the bound with what was cut', () => {
    expect(boundedMessage('short')).toBe('short');
    const exact = 'a'.repeat(MAX_MESSAGE_BYTES);
    expect(boundedMessage(exact)).toBe(exact);
    const cut = boundedMessage('a'.repeat(1_000_000));
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(cut).toMatch(/^a{4000,} … \(\d+ more characters\)$/);
  });

  it('never cuts a multi-byte character in its middle', () => {
    const cut = boundedMessage('€😀'.repeat(10_000));
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(cut).not.toMatch(/\uFFFD/);
    expect(cut.split(' … ')[0]).toMatch(/^(€😀)*€?$/u);
  });
});
