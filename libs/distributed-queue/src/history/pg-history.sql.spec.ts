import type { TaskPatch } from './history-fold';
import { PARAMS, upsertParams } from './pg-history.sql';

const full: TaskPatch = {
  topic: 'mail "x"', id: 'id\\1', submitted: true, status: 'dead', reentry: 2, delayMs: 10, ttrMs: 30_000, body: '{"a":"\\u00e9"}',
  key: 'k\n1', partition: 3, lastError: '{"name":"Error","message":"boom"}', machine: 'host/1', result: '{"total":3}', createTime: 1, dueTime: 2,
  executionTime: 3, finishedTime: 4, updatedTime: 5, lastEntry: '5-0',
};

describe('upsertParams', () => {
  it('writes every column of a full patch, each value as it is in the patch', () => {
    const [json] = upsertParams([full]);
    const [record] = JSON.parse(json) as Record<string, unknown>[];
    expect(Object.keys(record).sort()).toEqual(PARAMS.map(([, column]) => column).sort());
    for (const [field, column] of PARAMS) {
      expect(record[column]).toEqual(field === 'lastError' ? JSON.parse(full.lastError!) : full[field]);
    }
  });

  it('leaves null fields out, and writes one record per patch', () => {
    const bare: TaskPatch = { ...full, reentry: null, delayMs: null, ttrMs: null, body: null, key: null, partition: null, lastError: null, machine: null, result: null, dueTime: null, executionTime: null, finishedTime: null };
    const records = JSON.parse(upsertParams([bare, full])[0]) as Record<string, unknown>[];
    expect(records).toHaveLength(2);
    expect(Object.keys(records[0]).sort()).toEqual(['create_time', 'id', 'last_entry', 'status', 'submitted', 'topic', 'updated_time']);
    expect(upsertParams([])).toEqual(['[]']);
  });
});
