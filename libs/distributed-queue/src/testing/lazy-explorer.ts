import { Injectable } from '@nestjs/common';
import { DistributedQueueExplorer, type DiscoveredWorker } from '../distributed-queue.explorer';
import type { TaskWorkerOptions } from '../interfaces';
import { mergeWorkerOptions } from '../options/resolve-options';
import { InvalidOptionsError } from '../errors';

/**
 * The explorer of the testing module: it finds the `@TaskWorker` providers at module init, as the real one
 * does, or at its first use when the test did not init the module (`Test.createTestingModule(...).compile()`
 * runs no lifecycle hook), so that a service submitting in such a test knows its types. The testing
 * module's `workerOptions` are laid over the workers' own.
 */
@Injectable()
export class LazyExplorer extends DistributedQueueExplorer {
  private discovered = false;
  /** The testing module's `workerOptions`, laid over each worker's own once found. */
  overrides: Record<string, TaskWorkerOptions> = {};

  override onModuleInit(): void {
    if (this.discovered) return;
    this.discovered = true;
    super.onModuleInit();
    const workers = super.getWorkers();
    for (const worker of workers) {
      const layer = this.overrides[worker.type];
      if (layer) worker.options = mergeWorkerOptions(worker.options, layer);
    }
    const unknown = Object.keys(this.overrides).find((type) => !workers.some((w) => w.type === type));
    if (unknown !== undefined) throw new InvalidOptionsError(`workerOptions.${unknown}`, 'no @TaskWorker here handles this type (a misspelt type?)');
  }

  override getWorkers(): DiscoveredWorker[] {
    this.onModuleInit();
    return super.getWorkers();
  }

  override knownTypes(): string[] {
    this.onModuleInit();
    return super.knownTypes();
  }

  override isKnown(type: string): boolean {
    this.onModuleInit();
    return super.isKnown(type);
  }

  override isOrdered(type: string): boolean {
    this.onModuleInit();
    return super.isOrdered(type);
  }
}
