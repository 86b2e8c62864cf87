import type { DistributedQueueExplorer } from '../distributed-queue.explorer';
import { mergeWorkerOptions, type ResolvedModuleOptions } from '../options/resolve-options';

/**
 * The `ttr_ms` column: the handler timeout of a row's type, as the writing instance's options give it (its
 * worker's `timeoutMs`, else the `types` option's over `defaults`, else `defaults`). Derived by the writer,
 * so no stream entry carries it (no Redis memory or time on the hot path). Cached per type.
 */
export class TypeTimeouts {
  private readonly known = new Map<string, number>();

  constructor(
    private readonly explorer: DistributedQueueExplorer,
    private readonly options: ResolvedModuleOptions,
  ) {}

  /** The handler timeout (ms) of `type`. */
  of(type: string): number {
    let ms = this.known.get(type);
    if (ms === undefined) {
      const worker = this.explorer.getWorkers().find((w) => w.type === type);
      ms = worker ? worker.options.timeoutMs : mergeWorkerOptions(this.options.defaults, this.options.types[type]).timeoutMs;
      this.known.set(type, ms);
    }
    return ms;
  }
}
