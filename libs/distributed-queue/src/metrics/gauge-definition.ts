import type { Gauge } from 'prom-client';
import type { QueueStateSnapshot } from './queue-state.reader';

/** The labels of the scrape-time gauges. */
export type GaugeLabel = 'type' | 'state' | 'priority' | 'queue' | 'machine' | 'stream' | 'schedule' | 'node';

/** A scrape-time gauge: its name after the prefix, help, labels, and how a snapshot of the queue state fills it. */
export interface GaugeDefinition {
  suffix: string;
  help: string;
  labelNames: GaugeLabel[];
  fill: (gauge: Gauge<GaugeLabel>, snapshot: QueueStateSnapshot) => void;
}
