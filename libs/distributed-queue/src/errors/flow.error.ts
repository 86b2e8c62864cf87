import { DistributedQueueError } from './distributed-queue.error';

/**
 * A flow given to `submitFlow` is refused before anything is written: a cycle, an unknown ref or type, a
 * duplicate ref, a bad option. `ref` names the node at fault (absent for the flow as a whole).
 */
export class InvalidFlowError extends DistributedQueueError {
  constructor(
    problem: string,
    /** The ref of the node at fault; absent when the fault is the flow's as a whole. */
    readonly ref?: string,
  ) {
    super(ref === undefined ? `Invalid flow: ${problem}` : `Invalid flow node "${ref}": ${problem}`);
  }
}

/** A flow node's handler returned a result that is not JSON or larger than `flows.maxResultBytes`. */
export class FlowResultError extends DistributedQueueError {
  constructor(problem: string) {
    super(`Flow node result refused: ${problem}`);
  }
}
