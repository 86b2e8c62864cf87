import { quote } from './quote';

describe('quote', () => {
  it('names NaN and the infinities (JSON would write null)', () => {
    expect(quote(Number.NaN)).toBe('NaN');
    expect(quote(Infinity)).toBe('Infinity');
    expect(quote(-Infinity)).toBe('-Infinity');
    expect(quote({ port: Number.NaN })).toBe('{"port":"NaN"}');
    expect(quote(null)).toBe('null');
  });

  it('quotes strings and cuts long ones', () => {
    expect(quote('a')).toBe('"a"');
    expect(quote('x'.repeat(100))).toMatch(/… \(100 characters\)$/);
    expect(quote(undefined)).toBe('undefined');
  });
});
