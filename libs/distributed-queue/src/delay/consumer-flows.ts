import type { LoggerService } from '@nestjs/common';
import { FlowResultError } from '../errors';
import type { Task, TaskFlow } from '../interfaces';
import { FlowProgress } from '../flow/flow-progress';
import { parseFlowNodeId } from '../flow/flow-keys';
import { keptError } from '../runtime/error-stack';
import { reportFailure } from '../redis/outage-log';

/** How often a consumer looks for flow nodes buried without their flow knowing (a crash, an expired lease). */
export const SWEEP_MS = 5_000;

/** A consumer's side of flows: `task.flow` before a node's handler, its completion before its ack, its death. */
export class ConsumerFlows {
  private sweptAt = 0;
  private sweeping = false;

  constructor(
    private readonly type: string,
    private readonly progress: FlowProgress,
    private readonly logger: LoggerService,
  ) {}

  /** Whether the task is a flow node (id `&<flow>:<ref>`); one char test for the others. */
  is(id: string): boolean {
    return FlowProgress.isNode(this.type, id);
  }

  /** A root's `task.flow`: no dependencies, nothing to read. */
  rootContext(id: string): TaskFlow {
    const { flowId, ref } = parseFlowNodeId(id)!;
    return { id: flowId, ref, results: {}, failed: {} };
  }

  /** Reads what the node's handler gets in `task.flow`, then calls `run` with it (or `fail`). */
  withContext(id: string, run: (flow: TaskFlow) => void, fail: (error: Error) => void): void {
    this.progress.context(id).then(run, (error: Error) => fail(error));
  }

  /**
   * Records a node's completion and tells its dependents, before its ack. Returns null when the ack may go,
   * a `FlowResultError` when the result is refused (the attempt fails), or false when Redis did not take it:
   * then no ack (the lease expires and the node runs again; its repeat tells its dependents again).
   */
  async completed(id: string, result: unknown): Promise<FlowResultError | null | false> {
    let json: string;
    try {
      json = this.progress.encodeResult(result);
    } catch (error) {
      return error as FlowResultError;
    }
    try {
      await this.progress.completed(id, json);
      return null;
    } catch (error) {
      reportFailure(this.logger, `[${this.type}] flow node ${id}`, error, `[${this.type}] flow node ${id}: its completion could not be recorded (it runs again when its lease expires): ${(error as Error).message}`);
      return false;
    }
  }

  /** Runs the dead-letter sweep (see `FlowProgress.sweepDead`) at most every `SWEEP_MS`. */
  sweep(): void {
    const now = Date.now();
    if (this.sweeping || now - this.sweptAt < SWEEP_MS) return;
    this.sweeping = true;
    this.progress
      .sweepDead(this.type)
      .catch((error: Error) => reportFailure(this.logger, `[${this.type}] flow dead-letter sweep`, error, `[${this.type}] flow dead-letter sweep failed (retried): ${error.message}`))
      .finally(() => {
        this.sweeping = false;
        this.sweptAt = Date.now();
      });
  }

  /** A node was buried: its flow learns it (a failure here is repaired by the dead-letter sweep). */
  async dead(id: string, error: Error, attempts: number): Promise<void> {
    try {
      await this.progress.dead(id, { ...keptError(error), attempts, failedAt: Date.now() });
    } catch (failure) {
      reportFailure(this.logger, `[${this.type}] flow node ${id}`, failure, `[${this.type}] flow node ${id}: its death could not be recorded yet (the sweep retries): ${(failure as Error).message}`);
    }
  }
}
