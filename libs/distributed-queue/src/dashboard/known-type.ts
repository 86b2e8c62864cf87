import { UnknownTaskTypeError } from '../errors';
import type { TaskInspectorService } from '../services/task-inspector.service';

/**
 * Whether `type`, a type this application knows, is ordered. The dashboard serves no other type (a 404), so
 * that a typo in a URL cannot act on another application's queue.
 * @throws UnknownTaskTypeError
 */
export function isKnownOrdered(inspector: Pick<TaskInspectorService, 'listTypes'>, type: string): boolean {
  const found = inspector.listTypes().find((t) => t.type === type);
  if (!found) throw new UnknownTaskTypeError(type);
  return found.ordered;
}
