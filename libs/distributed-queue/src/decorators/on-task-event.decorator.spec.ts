import 'reflect-metadata';
import { defineTask } from '../contracts/task-contract';
import { InvalidOptionsError, InvalidTaskTypeError } from '../errors';
import { OnTaskEvent, TASK_EVENT_METADATA, type TaskEventMetadata } from './on-task-event.decorator';

const metadataOf = (decorate: MethodDecorator): TaskEventMetadata[] => {
  class Listener {
    on(): void {}
  }
  const descriptor = Object.getOwnPropertyDescriptor(Listener.prototype, 'on')!;
  decorate(Listener.prototype, 'on', descriptor);
  return Reflect.getMetadata(TASK_EVENT_METADATA, Listener.prototype.on) as TaskEventMetadata[];
};

describe('@OnTaskEvent', () => {
  it('records type, events and scope; a contract stands for its type; "*" means every event', () => {
    expect(metadataOf(OnTaskEvent('t', 'dead'))).toEqual([{ type: 't', events: ['dead'], scope: 'local' }]);
    expect(metadataOf(OnTaskEvent(defineTask<number>('c'), ['completed', 'failed'], { scope: 'fleet' }))).toEqual([
      { type: 'c', events: ['completed', 'failed'], scope: 'fleet' },
    ]);
    expect(metadataOf(OnTaskEvent('*', '*'))[0].events).toEqual(['completed', 'failed', 'retrying', 'dead', 'cancelled', 'recovered', 'rateLimited']);
    // rateLimited is local only: a fleet listener's '*' leaves it out
    expect(metadataOf(OnTaskEvent('*', '*', { scope: 'fleet' }))[0].events).toEqual(['completed', 'failed', 'retrying', 'dead', 'cancelled', 'recovered']);
    // progress is heard by name only, in both scopes
    expect(metadataOf(OnTaskEvent('t', 'progress', { scope: 'fleet' }))[0].events).toEqual(['progress']);
  });

  it('refuses unknown events, scopes and types, naming them', () => {
    expect(() => OnTaskEvent('t', 'finished' as never)).toThrow(InvalidOptionsError);
    expect(() => OnTaskEvent('t', 'finished' as never)).toThrow(/unknown event 'finished'/);
    expect(() => OnTaskEvent('t', [])).toThrow(/at least one event/);
    expect(() => OnTaskEvent('t', 'dead', { scope: 'everywhere' as never })).toThrow(/'local' or 'fleet'/);
    expect(() => OnTaskEvent('a{b}', 'dead')).toThrow(InvalidTaskTypeError);
    expect(() => OnTaskEvent('t', ['dead', 'rateLimited'], { scope: 'fleet' })).toThrow(/'rateLimited' is a local event/);
  });
});
