import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { TASK_EVENT_METADATA, type TaskEventMetadata } from '../decorators/on-task-event.decorator';
import type { TaskEvent } from '../interfaces/task-event.interface';
import { TaskEventBus } from './task-event-bus';

/** Finds `@OnTaskEvent` methods on the application's providers and controllers and adds them to the bus. */
@Injectable()
export class TaskEventExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly bus: TaskEventBus,
  ) {}

  onModuleInit(): void {
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (!prototype) continue;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method = instance[name];
        if (typeof method !== 'function') continue;
        const entries = Reflect.getMetadata(TASK_EVENT_METADATA, method) as TaskEventMetadata[] | undefined;
        for (const entry of entries ?? []) {
          this.bus.on(entry.scope, entry.type, entry.events, (event: TaskEvent) => (method as (e: TaskEvent) => unknown).call(instance, event));
        }
      }
    }
  }
}
