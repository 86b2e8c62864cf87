import { reportFailure } from '../redis/outage-log';
import { keptError, stackOf } from '../runtime/error-stack';
import type { TaskErrorInfo } from '../interfaces';
import type { RouteItem } from './route.store';
import type { RunnerContext } from './runner-context';

/**
 * An ordered flow node settled (see `FlowProgress`): its completion is recorded and told to its dependents
 * before its ack, its death before the ack that buries it. Returns the outcome to ack ('done', or the error
 * JSON: a result the flow refuses buries the node), or null when Redis did not take it: then the node stays
 * in flight and runs again (its repeat tells its dependents again, which changes nothing).
 */
export async function settleFlowNode(ctx: RunnerContext, item: RouteItem, outcome: string, result: unknown): Promise<string | null> {
  const flows = ctx.flows!;
  try {
    if (outcome === 'done') {
      let json: string;
      try {
        json = flows.encodeResult(result);
      } catch (error) {
        const failure = { ...keptError(error as Error), attempts: 1, stack: stackOf(error as Error) };
        await flows.dead(item.id, { ...failure, failedAt: Date.now() } as TaskErrorInfo);
        return JSON.stringify(failure);
      }
      await flows.completed(item.id, json);
      return outcome;
    }
    await flows.dead(item.id, { ...(JSON.parse(outcome) as TaskErrorInfo), failedAt: Date.now() });
    return outcome;
  } catch (error) {
    reportFailure(ctx.logger, '[route] flow node outcome', error, `[route] flow node ${item.id}: its outcome could not be recorded (it runs again): ${(error as Error).message}`);
    return null;
  }
}
