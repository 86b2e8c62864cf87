import { PartitionFullError } from '../errors';
import type { OrderedSubmitResult } from '../interfaces';
import { partitionOf } from './route-keys';
import type { RouteStore } from './route.store';

/** Attempts when a partition's count changed under the producer (a resize in progress). */
const STALE_RETRIES = 20;

/** Encodes an ordered task as stored after its seq: `{"id","type","key","at","payload"}`. */
export function encodeRouteItem(id: string, type: string, key: string, payloadJson: string, at: number): string {
  return `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"key":${JSON.stringify(key)},"at":${at},"payload":${payloadJson}}`;
}

/** Pushes ordered tasks to the partition of their key, following the partition count Redis holds. */
export class RouteProducer {
  private partitions?: number;

  constructor(private readonly store: RouteStore) {}

  async push(key: string, id: string, item: string): Promise<OrderedSubmitResult> {
    for (let attempt = 0; attempt < STALE_RETRIES; attempt++) {
      const n = (this.partitions ??= await this.store.partitionCount());
      if (n === 0) throw new Error(`Route queue "${this.store.options.qId}" is not initialised yet`);
      const partition = partitionOf(key, n);
      const [result, stored] = await this.store.push(partition, n, [item]);
      if (result === 'STALE') {
        this.partitions = undefined;
        if (Number(stored) !== n && stored !== '') continue;
        await new Promise((resolve) => setTimeout(resolve, 25));
        continue;
      }
      if (result === 'FULL') throw new PartitionFullError(partition, this.store.options.maxPartitionSize);
      if (result === 'd') return { id, partition, outcome: 'discarded' };
      if (result.startsWith('o:')) {
        const dropped = JSON.parse(result.slice(2)) as { id: string };
        return { id, partition, outcome: 'dropped-oldest', droppedId: dropped.id };
      }
      return { id, partition, outcome: 'queued' };
    }
    throw new Error(`Route queue "${this.store.options.qId}": partition count kept changing while submitting`);
  }
}
