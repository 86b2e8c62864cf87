import { isTaskContract, type TaskContract } from '../contracts/task-contract';
import { InvalidOptionsError } from '../errors';
import { LOCAL_ONLY_EVENT_NAMES, NAMED_ONLY_EVENT_NAMES, TASK_EVENT_NAMES, type OnTaskEventOptions, type TaskEventName } from '../interfaces/task-event.interface';
import { assertTaskType } from '../options/resolve-options';

/** Metadata key of `@OnTaskEvent` (on the method). */
export const TASK_EVENT_METADATA = 'distributed-queue:task-event';

/** What `@OnTaskEvent` records on a method (a method may carry several). */
export interface TaskEventMetadata {
  type: string;
  events: TaskEventName[];
  scope: 'local' | 'fleet';
}

/**
 * Calls the decorated provider method with each lifecycle event (`TaskEvent`) of `type` (a type string,
 * a contract, or `'*'` for every type). Listeners run after the state change, off the task's path: a
 * listener that throws is logged, one that hangs holds nothing up.
 *
 * `scope: 'local'` (the default) hears the tasks this instance ran; `scope: 'fleet'` hears every
 * instance's tasks from the type's Redis event stream (see `TaskEventScope` for what each delivers).
 *
 * @example
 * ```ts
 * @Injectable()
 * export class OrderAlerts {
 *   @OnTaskEvent(CloseOrder, 'dead')
 *   onDead({ task, error }: TaskEvent) { this.pager.page(`order ${task.id}: ${error?.message}`); }
 *
 *   @OnTaskEvent('order.close', ['completed', 'cancelled'], { scope: 'fleet' })
 *   onSettled(event: TaskEvent) { ... }
 * }
 * ```
 * `rateLimited` is local only: `'*'` of a fleet listener leaves it out, and naming it with `scope: 'fleet'` is refused.
 * `progress` is heard by name only: `'*'` leaves it out (a handler may report it many times a second).
 * @throws InvalidOptionsError for an unknown event name or scope, or a local-only event with `scope: 'fleet'`
 * (at start-up, when the class loads).
 */
export function OnTaskEvent(
  type: string | TaskContract<any, boolean>,
  events: TaskEventName | '*' | readonly TaskEventName[],
  options: OnTaskEventOptions = {},
): MethodDecorator {
  const typeName = isTaskContract(type) ? type.type : type;
  if (typeName !== '*') assertTaskType(typeName);
  const scope = options.scope ?? 'local';
  const label = `@OnTaskEvent('${typeName}')`;
  if (scope !== 'local' && scope !== 'fleet') throw new InvalidOptionsError(`${label} scope`, "must be 'local' or 'fleet'");
  const every = scope === 'fleet' ? TASK_EVENT_NAMES.filter((name) => !LOCAL_ONLY_EVENT_NAMES.includes(name)) : TASK_EVENT_NAMES;
  const names = events === '*' ? every.filter((name) => !NAMED_ONLY_EVENT_NAMES.includes(name)) : Array.isArray(events) ? [...events] : [events as TaskEventName];
  if (names.length === 0) throw new InvalidOptionsError(`${label} events`, 'must name at least one event');
  for (const name of names) {
    if (!TASK_EVENT_NAMES.includes(name)) {
      throw new InvalidOptionsError(`${label} events`, `unknown event '${String(name)}' (known: ${TASK_EVENT_NAMES.join(', ')}, or '*')`);
    }
    if (!every.includes(name)) throw new InvalidOptionsError(`${label} events`, `'${name}' is a local event (no stream carries it): use scope 'local'`);
  }
  const entry: TaskEventMetadata = { type: typeName, events: names, scope };
  return (_target, _key, descriptor: PropertyDescriptor) => {
    const method = descriptor.value as object;
    const existing = (Reflect.getMetadata(TASK_EVENT_METADATA, method) as TaskEventMetadata[] | undefined) ?? [];
    Reflect.defineMetadata(TASK_EVENT_METADATA, [...existing, entry], method);
    return descriptor;
  };
}
