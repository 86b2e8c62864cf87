import { InvalidArgumentError } from '../errors';
import { decodeHistoryCursor, encodeHistoryCursor } from './history-cursor';
import { checkHistorySearch, searchWhere } from './history-search';

describe('history cursor', () => {
  it('round-trips through an opaque base64url string', () => {
    const cursor = { createdAt: 1_700_000_000_123, type: 'mail/ü', id: 'a"b' };
    const encoded = encodeHistoryCursor(cursor);
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeHistoryCursor(encoded)).toEqual(cursor);
  });

  it.each([['not a cursor!'], [''], [Buffer.from('[1,2]').toString('base64url')], [Buffer.from('{').toString('base64url')], [42]])(
    'rejects %j naming the cursor',
    (bad) => {
      expect(() => decodeHistoryCursor(bad)).toThrow(InvalidArgumentError);
      expect(() => decodeHistoryCursor(bad)).toThrow(/"cursor"/);
    },
  );
});

describe('checkHistorySearch', () => {
  it('defaults the limit to 100', () => {
    expect(checkHistorySearch()).toEqual({ limit: 100 });
  });

  it.each([
    [{ limit: 0 }, 'limit'],
    [{ limit: 1001 }, 'limit'],
    [{ limit: 1.5 }, 'limit'],
    [{ status: 'lost' }, 'status'],
    [{ from: 2, to: 1 }, 'from'],
    [{ to: Number.NaN }, 'to'],
    [{ type: '' }, 'type'],
    [{ cursor: '%%' }, 'cursor'],
    [{ flowId: '' }, 'flowId'],
    [{ flowId: 'a b' }, 'flowId'],
    [{ flowId: 7 }, 'flowId'],
  ])('rejects %j naming %s', (query, argument) => {
    expect(() => checkHistorySearch(query as never)).toThrow(expect.objectContaining({ argument }));
  });

  it('builds the WHERE clause in parameter order', () => {
    const q = checkHistorySearch({ type: 't', status: 'done', flowId: 'f.1', from: 1, to: 2, limit: 5 });
    const { where, params } = searchWhere({ ...q, after: { createdAt: 3, type: 't', id: 'i' } });
    expect(params).toEqual(['t', 'done', 'f.1', 1, 2, 3, 't', 'i']);
    expect(where).toMatch(/^WHERE topic = \$1 AND status = \$2 AND flow_id = \$3 AND create_time >= .*\$4.* AND create_time < .*\$5/);
    expect(where).toMatch(/\(create_time, topic, id\) < \(.*\$6.*, \$7, \$8\)$/);
  });
});
