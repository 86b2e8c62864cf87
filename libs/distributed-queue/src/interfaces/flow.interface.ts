import type { TaskContract } from '../contracts/task-contract';
import type { TaskErrorInfo } from './inspection.interface';
import type { TaskState } from './task.interface';

/**
 * What a node's dependents do when it ends dead (its last attempt failed, or its lease expired on it):
 * - `fail`: they do not run, and the flow ends `failed` once nothing else can run;
 * - `ignore`: they run without its result (`task.flow.failed` has its error); the flow may still complete;
 * - `continue`: they do not run, the rest of the flow goes on, and the flow may still end `completed`.
 * Re-driving the dead node (`TaskInspectorService.redriveDead`) resumes the flow: when it completes, its dependents run.
 */
export type FlowFailurePolicy = 'fail' | 'ignore' | 'continue';

/** One node of `submitFlow`: a task that starts once every node it depends on has completed. */
export interface FlowNode<P = unknown> {
  /** Its name in the flow: 1 to 128 characters, unique in the flow, no control characters. */
  ref: string;
  /** Its task type (delay-queue or ordered), or a contract from `defineTask`. */
  type: string | TaskContract<P, boolean>;
  /** Its task's payload. */
  payload: P;
  /** The refs of the nodes it waits for. @default none: it starts at once (a root) */
  dependsOn?: string[];
  /** Ordered types: its ordering key (required there, refused elsewhere). */
  key?: string;
  /** Milliseconds to wait after its dependencies completed (a root: after the submit). @default 0 */
  delay?: number;
  /** Delay-queue types: its priority, 0 (the most urgent) to 1000. @default the type's default */
  priority?: number;
  /** Delay-queue types: its group (see `SubmitOptions.group`). @default none */
  group?: string;
  /** What its dependents do when it ends dead. @default 'fail' */
  onFailure?: FlowFailurePolicy;
}

/** Options of `submitFlow`. */
export interface SubmitFlowOptions {
  /**
   * The flow's id: 1 to 64 characters of `A-Z a-z 0-9 _ . -`. Submitting an id that exists creates nothing
   * and returns `created: false`; with an id, a `submitFlow` that failed half-way can be repeated safely.
   * @default a generated id (32 hex digits)
   */
  id?: string;
}

/** What `submitFlow` did. */
export interface FlowSubmitResult {
  /** The flow's id (`getFlow`, `cancelFlow`). */
  id: string;
  /** false when a flow with this id existed: nothing was written. */
  created: boolean;
  /** Each node's task: its type and id (`&<flow id>:<ref>`), for `getTask` and the dashboard. */
  nodes: Record<
    string,
    {
      /** The node's task type. */
      type: string;
      /** The node's task id. */
      id: string;
    }
  >;
}

/** Where a flow is. `creating`: submitFlow has not finished (or failed half-way: repeat it with the id). */
export type FlowState = 'creating' | 'running' | 'completed' | 'failed' | 'cancelled';

/**
 * Where a node is: `pending` waits for dependencies; `blocked` never runs unless a dead dependency is
 * re-driven; `delayed`, `ready`, `running` are its task's states; `completed`, `dead`, `cancelled` are final.
 */
export type FlowNodeState = 'pending' | 'blocked' | 'completed' | 'dead' | 'cancelled' | Exclude<TaskState, 'pending' | 'done' | 'dead'>;

/** One node of `getFlow`. */
export interface FlowNodeInfo {
  /** Its name in the flow. */
  ref: string;
  /** Its task type. */
  type: string;
  /** Its task's id. */
  id: string;
  /** Where it is. */
  state: FlowNodeState;
  /** The refs of the nodes it waits for (empty for a root). */
  dependsOn: string[];
  /** What its dependents do when it ends dead. */
  onFailure: FlowFailurePolicy;
  /** Ordered types: its key. */
  key?: string;
  /** Completed: what its handler returned (absent when it returned undefined). */
  result?: unknown;
  /** Dead: the error it died with. */
  error?: TaskErrorInfo;
}

/** A flow as `getFlow` reads it. */
export interface FlowInfo {
  /** The flow's id. */
  id: string;
  /** Where the flow is. */
  state: FlowState;
  /** When it was submitted (epoch ms). */
  createdAt: number;
  /** When it ended (completed, failed or cancelled). */
  endedAt?: number;
  /** Its nodes by where they are. */
  counts: {
    /** Nodes in the flow. */
    total: number;
    /** Nodes that completed. */
    completed: number;
    /** Nodes that ended dead. */
    dead: number;
    /** Nodes that were cancelled. */
    cancelled: number;
    /** Nodes that never run unless a dead dependency is re-driven. */
    blocked: number;
  };
  /** Every node, in the order submitFlow was given them. */
  nodes: FlowNodeInfo[];
}

/** What `cancelFlow` did. */
export interface FlowCancelResult {
  /** Nodes that had not started: they never will. */
  cancelled: number;
  /** Running nodes: their handlers' signals abort, and they are not retried. */
  cancelRequested: number;
}

/** What a flow node's handler reads in `task.flow`. */
export interface TaskFlow {
  /** The flow's id. */
  id: string;
  /** This node's ref. */
  ref: string;
  /** Its completed dependencies' results, by ref (a dependency that returned undefined has none). */
  results: Record<string, unknown>;
  /** Its dependencies that died under the policy `ignore`, by ref. */
  failed: Record<string, TaskErrorInfo>;
}

/** Module option `flows`. */
export interface FlowOptions {
  /** How long an ended flow's record (getFlow, results) is kept. @default 86400000 (24 hours) */
  retentionMs?: number;
  /** Largest serialised result of a flow node kept for its dependents; a larger one fails the task. @default 65536 */
  maxResultBytes?: number;
}
