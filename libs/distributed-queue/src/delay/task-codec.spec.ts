import { InvalidPayloadError, PayloadTooLargeError } from '../errors';
import { decodeRecord, encodePayload, withoutSeqTag } from './task-codec';

describe('records and payloads', () => {
  it('splits a record whose payload holds colons and newlines', () => {
    expect(decodeRecord('~2:5:1700000000000:ce:{"a":"x:y\\n"}')).toEqual({
      attempts: 2, seq: 5, dueAt: 1700000000000, flags: 'ce', priority: 0, payload: '{"a":"x:y\\n"}',
    });
    expect(decodeRecord('~garbage')).toBeNull();
    expect(decodeRecord('{"a":1}', 42)).toBeNull();
  });
  it('reads a priority from the flags of the long form', () => {
    expect(decodeRecord('~0:9:5:p12:{}')).toEqual({ attempts: 0, seq: 9, dueAt: 5, flags: '', priority: 12, payload: '{}' });
    expect(decodeRecord('~3:9:5:cp1000:[]')).toEqual({ attempts: 3, seq: 9, dueAt: 5, flags: 'c', priority: 1000, payload: '[]' });
  });
  it('reads a deadline from the flags of the long form, beside a priority and a place', () => {
    expect(decodeRecord('~1:5:100:cp3o90x2000:{"a":1}')).toMatchObject({ attempts: 1, priority: 3, expireAt: 2000, flags: 'c', payload: '{"a":1}' });
    expect(decodeRecord('~0:5:100::{}')?.expireAt).toBeUndefined();
  });

  it('reads the sequence tag of a task that never ran', () => {
    expect(decodeRecord('Bff{"a":1}', 42)).toEqual({ attempts: 0, seq: 255, dueAt: 42, flags: '', priority: 0, payload: '{"a":1}' });
    expect(decodeRecord('A7true')).toEqual({ attempts: 0, seq: 7, dueAt: 0, flags: '', priority: 0, payload: 'true' });
  });
  it('reads the priority of a waiting task\'s short record (a letter up to 26, else 1 to 4 digits before its tag)', () => {
    expect(decodeRecord('eBff{"a":1}', 42)).toEqual({ attempts: 0, seq: 255, dueAt: 42, flags: '', priority: 5, payload: '{"a":1}' });
    expect(decodeRecord('aA1true')).toMatchObject({ seq: 1, priority: 1, payload: 'true' });
    expect(decodeRecord('zA1null')).toMatchObject({ seq: 1, priority: 26, payload: 'null' });
    expect(decodeRecord('R1000A712')).toEqual({ attempts: 0, seq: 7, dueAt: 0, flags: '', priority: 1000, payload: '12' });
    expect(decodeRecord('P27C1f0[]')).toMatchObject({ seq: 0x1f0, priority: 27, payload: '[]' });
    // digits that are none, or no tag after them: not a record
    expect(decodeRecord('Ox{"a":1}')).toBeNull();
    expect(decodeRecord('O5{"a":1}')).toBeNull();
  });
  it('splits the trace context off a traced payload, in both record forms', () => {
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(decodeRecord(`Bff^${tp}|{"a":1}`, 42)).toEqual({ attempts: 0, seq: 255, dueAt: 42, flags: '', priority: 0, payload: '{"a":1}', traceContext: tp });
    expect(decodeRecord(`~1:5:7:c:^${tp}|"x|y"`)).toEqual({ attempts: 1, seq: 5, dueAt: 7, flags: 'c', priority: 0, payload: '"x|y"', traceContext: tp });
  });
  it('drops the seq tag of a never-run record and leaves a bare payload alone', () => {
    expect(withoutSeqTag('C1ff{"a":1}')).toBe('{"a":1}');
    expect(withoutSeqTag('N1fffffffffffff[1]')).toBe('[1]');
    expect(withoutSeqTag('A0null')).toBe('null');
    expect(withoutSeqTag('{"a":1}')).toBe('{"a":1}');
    expect(withoutSeqTag('"Abc"')).toBe('"Abc"');
  });
  it('encodes JSON and enforces the size limit', () => {
    expect(encodePayload({ a: 1 }, 100)).toBe('{"a":1}');
    expect(() => encodePayload('é'.repeat(60), 100)).toThrow(PayloadTooLargeError);
    expect(() => encodePayload(Symbol('s'), 100)).toThrow(InvalidPayloadError);
  });
});
