import { InvalidOptionsError } from '../errors';
import { historyPoolConfig, historyTableNames } from './pg-history.options';

describe('history options', () => {
  it('names the relations, quoted, in the schema when one is given', () => {
    expect(historyTableNames()).toMatchObject({ label: 'dq_task_history', history: '"dq_task_history"' });
    expect(historyTableNames('h', 'ops')).toMatchObject({
      label: 'ops.h',
      history: '"ops"."h"',
      positions: '"ops"."h_positions"',
      version: '"ops"."h_schema"',
      byStatusIndex: '"h_by_status"',
    });
  });

  it.each([['Robert"); drop table x;--'], ['1abc'], ['a-b'], [''], ['x'.repeat(54)], [7]])('rejects the table %j', (table) => {
    expect(() => historyTableNames(table)).toThrow(expect.objectContaining({ option: 'history.table' }));
  });

  it('rejects a schema that is not a plain identifier', () => {
    expect(() => historyTableNames('t', 'a.b')).toThrow(expect.objectContaining({ option: 'history.schema' }));
  });

  it.each([['pg_class'], ['Hist'], ['pg_x']])('rejects the table %j (catalog names, upper case)', (table) => {
    expect(() => historyTableNames(table)).toThrow(expect.objectContaining({ option: 'history.table' }));
  });

  it.each([['pg_catalog'], ['pg_toast'], ['information_schema'], ['Ops'], ['s'.repeat(64)]])('rejects the schema %j', (schema) => {
    expect(() => historyTableNames('t', schema)).toThrow(expect.objectContaining({ option: 'history.schema' }));
  });

  it('takes the longest names the rule allows', () => {
    expect(historyTableNames('t'.repeat(53), 's'.repeat(63)).positions).toBe(`"${'s'.repeat(63)}"."${'t'.repeat(53)}_positions"`);
  });

  it('adds bounded timeouts unless the config sets them', () => {
    expect(historyPoolConfig({ connection: 'postgres://x/y' })).toMatchObject({
      connectionString: 'postgres://x/y',
      connectionTimeoutMillis: 5000,
      query_timeout: 10000,
      max: 4,
    });
    expect(historyPoolConfig({ connection: { host: 'h', connectionTimeoutMillis: 100 }, poolSize: 2 })).toMatchObject({
      host: 'h',
      connectionTimeoutMillis: 100,
      max: 2,
    });
    expect(historyPoolConfig({ connection: { query_timeout: 500 } })).toMatchObject({ query_timeout: 500 });
    expect(historyPoolConfig({ connection: { query_timeout: 500 }, queryTimeoutMs: 1500 })).toMatchObject({ query_timeout: 1500 });
    expect(() => historyPoolConfig({ connection: 'x', queryTimeoutMs: 0 })).toThrow(expect.objectContaining({ option: 'history.queryTimeoutMs' }));
    expect(() => historyPoolConfig({ connection: '' })).toThrow(InvalidOptionsError);
    expect(() => historyPoolConfig({ connection: 'x', poolSize: 0 })).toThrow(expect.objectContaining({ option: 'history.poolSize' }));
  });

  it('without the pg package, fails naming the history option', () => {
    jest.isolateModules(() => {
      jest.doMock('pg', () => {
        throw Object.assign(new Error("Cannot find module 'pg' from 'pg.loader.ts'"), { code: 'MODULE_NOT_FOUND' });
      });
      const { loadPg } = require('./pg.loader') as typeof import('./pg.loader');
      const { InvalidOptionsError: IsolatedError } = require('../errors') as typeof import('../errors');
      expect(() => loadPg()).toThrow(IsolatedError);
      expect(() => loadPg()).toThrow('Invalid distributed-queue option "history": needs the pg package (npm i pg)');
    });
    jest.dontMock('pg');
  });
});
