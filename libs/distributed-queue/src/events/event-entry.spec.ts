import { countEventsOfEntry, eventsOfEntry, type EventCounts } from './event-entry';
import type { StreamEntry } from './stream-entry';

describe('eventsOfEntry', () => {
  it('gives one event per task of a batch entry, with the entry time', () => {
    const events = eventsOfEntry(['1700000000000-0', ['e', 'completed', 'ids', '["a","b"]', 'a', '[1,2]']], 'order.close');
    expect(events.map((e) => [e.event, e.scope, e.task.id, e.task.type, e.task.attempt, e.at])).toEqual([
      ['completed', 'fleet', 'a', 'order.close', 1, 1700000000000],
      ['completed', 'fleet', 'b', 'order.close', 2, 1700000000000],
    ]);
    expect(events[0].task.payload).toBeUndefined();
  });

  it('precedes retrying and dead with failed, both carrying the error', () => {
    const events = eventsOfEntry(['5-0', ['e', 'dead', 'ids', '["x"]', 'a', '[3]', 'err', '[{"name":"Boom","message":"no"}]']], 't');
    expect(events.map((e) => e.event)).toEqual(['failed', 'dead']);
    expect(events[1].error).toEqual({ name: 'Boom', message: 'no', attempts: 3, failedAt: 5 });
  });

  it('precedes a cancelled that carries an error (a running attempt ended by the cancel) with failed, not one without', () => {
    const running = eventsOfEntry(['6-0', ['e', 'cancelled', 'ids', '["r"]', 'a', '[1]', 'err', '[{"name":"TaskCancelledError","message":"c"}]']], 't');
    expect(running.map((e) => e.event)).toEqual(['failed', 'cancelled']);
    expect(running[0].error).toEqual({ name: 'TaskCancelledError', message: 'c', attempts: 1, failedAt: 6 });
    const waiting = eventsOfEntry(['6-1', ['e', 'cancelled', 'ids', '["w"]', 'a', '[0]']], 't');
    expect(waiting.map((e) => e.event)).toEqual(['cancelled']);
  });

  it('reads route entries: each task its own type and key', () => {
    const [event] = eventsOfEntry(['7-1', ['e', 'completed', 'ids', '["i"]', 't', '["acct"]', 'k', '["k1"]', 'a', '[0]']]);
    expect(event.task).toMatchObject({ id: 'i', type: 'acct', key: 'k1' });
  });

  it("ignores the history's own entries (an ordered task's in-process retry, field h)", () => {
    expect(eventsOfEntry(['8-0', ['e', 'retrying', 'ids', '["o"]', 'a', '[1]', 'err', '[{"name":"E","message":"m"}]', 'h', '1']])).toEqual([]);
  });

  it('ignores entries it cannot read', () => {
    expect(eventsOfEntry(['1-0', ['e', 'exploded', 'ids', '["a"]']], 't')).toEqual([]);
    expect(eventsOfEntry(['1-0', ['e', 'completed', 'ids', 'not json']], 't')).toEqual([]);
  });
});

describe('countEventsOfEntry', () => {
  const entries: [StreamEntry, string | undefined][] = [
    [['1-0', ['e', 'completed', 'ids', '["a","b"]', 'a', '[1,2]', 'r', '["1","2"]']], 'order.close'],
    [['5-0', ['e', 'dead', 'ids', '["x","y"]', 'a', '[3,3]', 'err', '[{"name":"Boom","message":"no"},{"name":"B","message":"n"}]']], 't'],
    [['5-1', ['e', 'retrying', 'ids', '["x"]', 'a', '[1]', 'err', '[{"name":"Boom","message":"no"}]']], 't'],
    [['6-0', ['e', 'cancelled', 'ids', '["r","w"]', 'a', '[1,0]', 'err', '[{"name":"TaskCancelledError","message":"c"},null]']], 't'],
    [['6-1', ['e', 'cancelled', 'ids', '["w"]', 'a', '[0]']], 't'],
    [['7-1', ['e', 'completed', 'ids', '["i","j","k"]', 't', '["acct","acct","mail"]', 'k', '["k1","k2","k3"]', 'a', '[0,0,0]']], undefined],
    [['7-2', ['e', 'dead', 'ids', '["i","j"]', 't', '["acct","mail"]', 'a', '[1,1]', 'err', '[{"name":"E","message":"m"},{"name":"E","message":"m"}]']], undefined],
    [['7-3', ['e', 'started', 'ids', '["s"]', 'a', '[1]']], 't'],
    [['7-4', ['e', 'submitted', 'ids', '["s"]']], 't'],
    [['8-0', ['e', 'retrying', 'ids', '["o"]', 'a', '[1]', 'err', '[{"name":"E","message":"m"}]', 'h', '1']], undefined],
    [['9-0', ['e', 'progress', 'ids', '["p","q"]', 'a', '[1,1]', 'p', '[50,{"x":1}]']], 't'],
    [['1-0', ['e', 'exploded', 'ids', '["a"]']], 't'],
    [['1-0', ['e', 'completed', 'ids', 'not json']], 't'],
    [['1-0', ['e', 'completed']], 't'],
  ];

  it('counts, by type and event, exactly the events eventsOfEntry gives', () => {
    for (const [entry, type] of entries) {
      const built: EventCounts = new Map();
      for (const { event, task } of eventsOfEntry(entry, type)) {
        const own = built.get(task.type) ?? {};
        built.set(task.type, own);
        own[event] = (own[event] ?? 0) + 1;
      }
      const counted: EventCounts = new Map();
      countEventsOfEntry(entry, type, counted);
      expect([entry[0], entry[1][1], counted]).toEqual([entry[0], entry[1][1], built]);
    }
  });
});
