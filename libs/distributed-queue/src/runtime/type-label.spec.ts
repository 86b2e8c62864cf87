import { CRON_TICK_TYPE, cronRunType, routeDelayType } from '../distributed-queue.constants';
import { typeLabel } from './type-label';

describe('typeLabel', () => {
  it("names a user's type as it is", () => {
    expect(typeLabel('order.close')).toBe('order.close');
    expect(typeLabel('order.close', 'id@1@2')).toBe('order.close');
  });

  it("names the library's own types by what they do", () => {
    expect(typeLabel(routeDelayType('ledger'))).toBe('delayed ordered tasks of route queue "ledger"');
    expect(typeLabel(cronRunType('nightly'))).toBe('schedule "nightly"');
    expect(typeLabel(CRON_TICK_TYPE)).toBe('schedule ticks');
    expect(typeLabel(CRON_TICK_TYPE, 'nightly@3@1700000000000')).toBe('tick of schedule "nightly"');
    expect(typeLabel(CRON_TICK_TYPE, '@bad')).toBe('schedule ticks');
  });
});
