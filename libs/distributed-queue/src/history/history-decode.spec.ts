import { historyEventsOf, isOrderedDelayStream } from './history-decode';

describe('historyEventsOf', () => {
  const delayStream = { type: '__route__.q' };
  const item = JSON.stringify({ id: 'o1', type: 'acct', key: 'k', payload: { n: 1 } });
  const submit = (body: string): [string, string[]] => ['1700000000000-0', ['e', 'submitted', 'ids', '["o1"]', 'due', '[1700000001500]', 'd', '[1500]', 'b', JSON.stringify([body])]];

  it("reads a delayed ordered task's submit on the route queue's delay stream as the ordered task's", () => {
    expect(isOrderedDelayStream(delayStream)).toBe(true);
    expect(isOrderedDelayStream({ type: 'mail' })).toBe(false);
    expect(historyEventsOf(submit(JSON.stringify({ key: 'k', item })), delayStream)).toEqual([
      { event: 'submitted', type: 'acct', id: 'o1', at: 1700000000000, entryId: '1700000000000-0', key: 'k', dueAt: 1700000001500, delayMs: 1500, body: '{"n":1}' },
    ]);
  });

  it('skips the internal moves (completions of the mover) and unreadable submits there', () => {
    expect(historyEventsOf(['1700000000001-0', ['e', 'completed', 'ids', '["o1"]', 'a', '[1]']], delayStream)).toEqual([]);
    expect(historyEventsOf(submit('not json'), delayStream)).toEqual([]);
    expect(historyEventsOf(submit(JSON.stringify({ key: 'k', item: '{"id":"o1"}' })), delayStream)).toEqual([]);
  });

  it('leaves other streams as decoded', () => {
    const [e] = historyEventsOf(['1700000000002-0', ['e', 'rescheduled', 'ids', '["t"]', 'due', '[5]', 'd', '[3]']], { type: 'mail' });
    expect(e).toMatchObject({ event: 'rescheduled', type: 'mail', id: 't', dueAt: 5, delayMs: 3 });
  });
});
