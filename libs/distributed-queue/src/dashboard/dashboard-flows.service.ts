import { Injectable, NotFoundException } from '@nestjs/common';
import { InvalidArgumentError } from '../errors';
import type { FlowCancelResult, FlowNodeInfo } from '../interfaces';
import { TaskFlowService } from '../services/task-flow.service';
import type { DashboardFlow, DashboardFlowNode, DashboardFlowPage } from './dashboard-api';
import { wholeParam } from './groups-request';

/** Flows per page of the dashboard's list unless the request says otherwise, and the most a page holds. */
export const FLOW_PAGE = 50;
export const MAX_FLOW_PAGE = 200;
/** A completed node's result is sent when its JSON is at most this long (else its size only). */
export const MAX_SHOWN_RESULT = 1024;

/**
 * The dashboard's view of flows (`TaskFlowService`): the newest flows page by page, one flow with every
 * node (the page lays it out), and its cancel. A bad id is the flows service's 400 (`InvalidFlowError`);
 * an unknown or expired flow a 404.
 */
@Injectable()
export class DashboardFlowsService {
  constructor(private readonly flows: TaskFlowService) {}

  /** Query `?offset=&limit=` (defaults 0 and 50, limit at most 200): the newest flows first. */
  async list(query: Record<string, unknown>): Promise<DashboardFlowPage> {
    const offset = wholeParam(query.offset, 'offset', 0);
    const limit = wholeParam(query.limit, 'limit', FLOW_PAGE);
    if (limit < 1 || limit > MAX_FLOW_PAGE) throw new InvalidArgumentError('limit', `must be from 1 to ${MAX_FLOW_PAGE}, got ${limit}`);
    // one more than asked: whether a next page exists
    const flows = await this.flows.listFlows(offset, limit + 1);
    return { offset, limit, more: flows.length > limit, flows: flows.slice(0, limit) };
  }

  /** A flow and all its nodes; results longer than MAX_SHOWN_RESULT are left out (their size is sent). */
  async get(id: string): Promise<DashboardFlow> {
    const flow = await this.flows.getFlow(id);
    if (!flow) throw new NotFoundException(`no flow "${id}" (never submitted, or ended longer ago than flows.retentionMs)`);
    return { ...flow, nodes: flow.nodes.map(shownNode) };
  }

  /** Cancels what has not run of a flow (see `TaskFlowService.cancelFlow`); an unknown flow is a 404. */
  async cancel(id: string): Promise<FlowCancelResult> {
    const result = await this.flows.cancelFlow(id);
    // NOTE: nothing cancelled: an ended flow, or none; only then is the flow looked up.
    if (result.cancelled + result.cancelRequested === 0 && !(await this.flows.getFlow(id))) {
      throw new NotFoundException(`no flow "${id}"`);
    }
    return result;
  }
}

function shownNode(node: FlowNodeInfo): DashboardFlowNode {
  if (!('result' in node)) return node;
  const { result, ...rest } = node;
  const bytes = Buffer.byteLength(JSON.stringify(result));
  return bytes <= MAX_SHOWN_RESULT ? node : { ...rest, resultBytes: bytes };
}
