import { Injectable, Logger } from '@nestjs/common';
import type { FlowState } from '../interfaces';

/** A flow's end, as flow listeners get it. */
export interface FlowEndedEvent {
  flowId: string;
  state: Exclude<FlowState, 'creating' | 'running'>;
  /** When it was seen (epoch ms, this process's clock). */
  at: number;
}

export type FlowEndedListener = (event: FlowEndedEvent) => void | Promise<void>;

/**
 * Flow ends heard in this process: the instance whose call ended a flow (the last node's worker, a
 * cancelFlow) emits it, once per end across the fleet (the end is decided in one script call).
 */
@Injectable()
export class FlowEvents {
  private readonly listeners = new Set<FlowEndedListener>();
  private readonly logger = new Logger('DistributedQueue');

  /** Adds a listener of flow ends; returns its removal. */
  on(listener: FlowEndedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** @internal A flow ended ('' = it did not). */
  ended(flowId: string, state: string): void {
    if (state === '') return;
    const event: FlowEndedEvent = { flowId, state: state as FlowEndedEvent['state'], at: Date.now() };
    for (const listener of this.listeners) {
      try {
        void Promise.resolve(listener(event)).catch((error: unknown) => this.report(error));
      } catch (error) {
        this.report(error);
      }
    }
  }

  private report(error: unknown): void {
    this.logger.error(`flow event listener failed: ${(error as Error)?.message ?? String(error)}`);
  }
}
