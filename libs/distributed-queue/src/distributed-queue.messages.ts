export const DUPLICATE_WORKER = (type: string, first: string, second: string): string =>
  `Task type "${type}" has two workers: ${first} and ${second}. One type has one @TaskWorker per application.`;
export const MISSING_HANDLE = (name: string, type: string): string =>
  `${name} is a @TaskWorker('${type}') but has no handle(task, signal) method (implement TaskHandler).`;
export const WORKERS_STARTED = (types: string[]): string =>
  types.length ? `Delay queue workers started for: ${types.join(', ')}` : 'No @TaskWorker found; submitting only';
export const ACKS_NOT_CONFIRMED = (acknowledged: number, required: number, timeoutMs: number, reason?: string): string =>
  `Durable acks: only ${acknowledged} of ${required} replicas acknowledged within ${timeoutMs} ms${reason ? ` (${reason})` : ''}. ` +
  'Workers go on and their acks stay applied on the master (completions announced all the same while the master answers), ' +
  'but a failover now may lose them: those tasks would run again. Logged once until replicas confirm again';

/** A route ack call found some of its tasks not in flight (see PartitionAcks' `onPartial`). */
export const ROUTE_ACK_PARTIAL = (partition: number, tasks: number): string =>
  `[route p${partition}] an ack of ${tasks} task(s) found some not in flight (a failover lost the take that handed them out, or they were acked before): their events are not announced, and those still waiting run again`;

export const ACKS_CONFIRMED_AGAIN = (ms: number, unconfirmed: number): string =>
  `Durable acks: replicas confirm again after ${(ms / 1000).toFixed(1)} s (${unconfirmed} ack call(s) not confirmed meanwhile)`;
