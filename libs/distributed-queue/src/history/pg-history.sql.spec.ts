import type { TaskPatch } from './history-fold';
import { HistoryRow, PARAMS, toRecord, upsertParams } from './pg-history.sql';

const full: TaskPatch = {
  topic: 'mail "x"', id: 'id\\1', submitted: true, status: 'dead', reentry: 2, delayMs: 10, ttrMs: 30_000, body: '{"a":"\\u00e9"}',
  key: 'k\n1', partition: 3, lastError: '{"name":"Error","message":"boom"}', machine: 'host/1', result: '{"total":3}', logs: '2 1 3\n[1,10,"é\\n"]', createTime: 1, dueTime: 2,
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
    const bare: TaskPatch = { ...full, reentry: null, delayMs: null, ttrMs: null, body: null, key: null, partition: null, lastError: null, machine: null, result: null, logs: null, dueTime: null, executionTime: null, finishedTime: null };
    const records = JSON.parse(upsertParams([bare, full])[0]) as Record<string, unknown>[];
    expect(records).toHaveLength(2);
    expect(Object.keys(records[0]).sort()).toEqual(['create_time', 'id', 'last_entry', 'status', 'submitted', 'topic', 'updated_time']);
    expect(upsertParams([])).toEqual(['[]']);
  });
});

describe('toRecord', () => {
  const row: HistoryRow = {
    topic: 'mail', id: 'a', status: 'done', reentry: 2, delay_ms: null, ttr_ms: null, body: '{"x":1}', ordering_key: null, partition: null,
    flow_id: null, last_error: null, result: null, logs: null, machine: null, create_ms: 1, due_ms: null, execution_ms: null, finished_ms: 4, updated_ms: 4,
  };

  it("parses the log lines of column logs, oldest first, with the lines dropped", () => {
    const record = toRecord({ ...row, logs: '3\n[1,10,"first"]\nnot json\n[2,20,"second"]' });
    expect(record.logs).toEqual([
      { attempt: 1, at: 10, line: 'first' },
      { attempt: 2, at: 20, line: 'second' },
    ]);
    expect(record.logsDropped).toBe(3);
    expect(toRecord({ ...row, logs: '0\n[1,10,"only"]' })).not.toHaveProperty('logsDropped');
  });

  it('has no logs when the column is null', () => {
    const record = toRecord(row);
    expect(record).not.toHaveProperty('logs');
    expect(record).not.toHaveProperty('logsDropped');
    expect(record).toMatchObject({ type: 'mail', id: 'a', status: 'done', attempts: 2, payload: { x: 1 } });
  });
});
