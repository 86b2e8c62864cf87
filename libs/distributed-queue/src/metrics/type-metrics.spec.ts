import { Registry } from 'prom-client';
import { TypeCounter, TypeHistogram } from './type-metrics';

describe('TypeCounter and TypeHistogram in a prom-client Registry', () => {
  it('expose per-type counts and cumulative buckets in the text format', async () => {
    const registry = new Registry();
    const counter = new TypeCounter('dq_tasks_completed_total', 'done');
    const histogram = new TypeHistogram('dq_handler_duration_seconds', 'took', [0.01, 0.1]);
    registry.registerMetric(counter as never);
    registry.registerMetric(histogram as never);
    counter.inc('a');
    counter.inc('a', 2);
    counter.inc('b');
    for (const v of [0.005, 0.01, 0.05, 3]) histogram.observe('a', v);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE dq_tasks_completed_total counter');
    expect(text).toContain('dq_tasks_completed_total{type="a"} 3');
    expect(text).toContain('dq_tasks_completed_total{type="b"} 1');
    expect(text).toContain('# TYPE dq_handler_duration_seconds histogram');
    expect(text).toContain('dq_handler_duration_seconds_bucket{le="0.01",type="a"} 2');
    expect(text).toContain('dq_handler_duration_seconds_bucket{le="0.1",type="a"} 3');
    expect(text).toContain('dq_handler_duration_seconds_bucket{le="+Inf",type="a"} 4');
    expect(text).toContain('dq_handler_duration_seconds_sum{type="a"} 3.065');
    expect(text).toContain('dq_handler_duration_seconds_count{type="a"} 4');
    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain('type="a"');
    expect(registry.getSingleMetric('dq_tasks_completed_total')).toBe(counter);
  });
});
