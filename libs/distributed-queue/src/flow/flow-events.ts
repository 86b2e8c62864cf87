import { Inject, Injectable, Logger } from '@nestjs/common';
import { DISTRIBUTED_QUEUE_REDIS, DISTRIBUTED_QUEUE_RESOLVED_OPTIONS } from '../distributed-queue.constants';
import type { FlowState } from '../interfaces';
import type { ResolvedModuleOptions } from '../options/resolve-options';
import type { RedisClient } from '../redis/script-loader';
import { EventSubscriber } from '../runtime/event-subscriber';
import { toError } from '../runtime/handler-call';

/** A flow's end, as flow listeners get it. */
export interface FlowEndedEvent {
  /** The flow's id. */
  flowId: string;
  /** How it ended. */
  state: Exclude<FlowState, 'creating' | 'running'>;
  /** When it was seen (epoch ms, this process's clock). */
  at: number;
}

/**
 * A listener of flow ends (`TaskFlowService.onFlowEnded`, `followFlowEnds`). What it throws or rejects with is
 * logged, not rethrown.
 */
export type FlowEndedListener = (event: FlowEndedEvent) => void | Promise<void>;

/**
 * Flow ends. The instance whose call ended a flow (the last node's worker, a cancelFlow) emits it to its
 * local listeners, once per end across the fleet (the end is decided in one script call), and publishes it
 * on the channel `<prefix>:events:flows`, which fleet listeners of every instance follow (pub/sub: while
 * connected, at most once).
 */
@Injectable()
export class FlowEvents {
  private readonly listeners = new Set<FlowEndedListener>();
  private readonly fleet = new Set<FlowEndedListener>();
  private readonly logger = new Logger('DistributedQueue');

  constructor(
    @Inject(DISTRIBUTED_QUEUE_REDIS) private readonly client: RedisClient,
    @Inject(DISTRIBUTED_QUEUE_RESOLVED_OPTIONS) private readonly options: ResolvedModuleOptions,
    private readonly subscriber: EventSubscriber,
  ) {}

  private get channel(): string {
    return `${this.options.keyPrefix}:events:flows`;
  }

  /** Adds a fleet listener (the first one subscribes); resolves with its removal once subscribed. */
  async follow(listener: FlowEndedListener): Promise<() => Promise<void>> {
    this.fleet.add(listener);
    try {
      if (this.fleet.size === 1) await this.subscriber.subscribe(this.channel, (message) => this.heard(message));
    } catch (error) {
      this.fleet.delete(listener);
      throw error;
    }
    return async () => {
      if (this.fleet.delete(listener) && this.fleet.size === 0) await this.subscriber.unsubscribe(this.channel);
    };
  }

  private heard(message: string): void {
    let event: FlowEndedEvent;
    try {
      const { flowId, state } = JSON.parse(message) as { flowId: string; state: FlowEndedEvent['state'] };
      event = { flowId, state, at: Date.now() };
    } catch {
      return;
    }
    this.deliver(this.fleet, event);
  }

  /** Adds a listener of flow ends; returns its removal. */
  on(listener: FlowEndedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** @internal A flow ended ('' = it did not). */
  ended(flowId: string, state: string): void {
    if (state === '') return;
    const event: FlowEndedEvent = { flowId, state: state as FlowEndedEvent['state'], at: Date.now() };
    this.client.publish(this.channel, JSON.stringify({ flowId, state })).catch((error: Error) => this.report(error));
    this.deliver(this.listeners, event);
  }

  private deliver(listeners: Set<FlowEndedListener>, event: FlowEndedEvent): void {
    for (const listener of listeners) {
      try {
        void Promise.resolve(listener(event)).catch((error: unknown) => this.report(error));
      } catch (error) {
        this.report(error);
      }
    }
  }

  private report(error: unknown): void {
    this.logger.error(`flow event listener failed: ${toError(error).message}`);
  }
}
