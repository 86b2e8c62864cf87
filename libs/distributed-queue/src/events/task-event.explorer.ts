import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { TASK_EVENT_METADATA, type TaskEventMetadata } from '../decorators/on-task-event.decorator';
import type { TaskEvent } from '../interfaces/task-event.interface';
import { TaskEventBus } from './task-event-bus';
import { decoratedMethods } from '../runtime/decorated-methods';

/** Finds `@OnTaskEvent` methods on the application's providers and controllers and adds them to the bus. */
@Injectable()
export class TaskEventExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly bus: TaskEventBus,
  ) {}

  onModuleInit(): void {
    for (const { instance, method, metadata } of decoratedMethods<TaskEventMetadata[]>(this.discovery, this.scanner, TASK_EVENT_METADATA)) {
      for (const entry of metadata) {
        this.bus.on(entry.scope, entry.type, entry.events, (event: TaskEvent) => (method as (e: TaskEvent) => unknown).call(instance, event));
      }
    }
  }
}
