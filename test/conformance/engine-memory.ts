import 'reflect-metadata';
import { Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { QueueControlService, TaskInspectorService, TaskScheduleService, TaskSubmitService } from 'nestjs-distributed-queue';
import { DistributedQueueTestingModule, TestQueue } from 'nestjs-distributed-queue/testing';
import type { Engine, EngineFactory, EngineOptions } from './engine';

/**
 * The conformance suite's binding of the in-memory engine (`DistributedQueueTestingModule`, manual mode):
 * `advance` moves its clock and runs what falls due on the way; `settle` runs what is due now.
 */
export const memoryEngine: EngineFactory = {
  name: 'memory',
  async start(options: EngineOptions, workers: Type<unknown>[]): Promise<Engine> {
    @Module({ imports: [DistributedQueueTestingModule.forRoot(options)], providers: workers })
    class MemoryAppModule {}
    const app = await NestFactory.createApplicationContext(MemoryAppModule, { logger: ['error'], abortOnError: false });
    try {
      await app.init();
    } catch (error) {
      await app.close().catch(() => undefined);
      throw error;
    }
    const queue = app.get(TestQueue);
    return {
      name: 'memory',
      submit: app.get(TaskSubmitService),
      inspect: app.get(TaskInspectorService),
      control: app.get(QueueControlService),
      schedules: app.get(TaskScheduleService),
      advance: async (ms) => {
        await queue.advanceBy(ms);
      },
      settle: async () => {
        await queue.runDue();
      },
      close: () => app.close(),
    };
  },
};
