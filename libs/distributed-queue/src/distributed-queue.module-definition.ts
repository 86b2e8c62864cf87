import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { DistributedQueueModuleOptions } from './interfaces';

export const {
  ConfigurableModuleClass: ConfigurableDistributedQueueModule,
  MODULE_OPTIONS_TOKEN: DISTRIBUTED_QUEUE_MODULE_OPTIONS,
  OPTIONS_TYPE: DISTRIBUTED_QUEUE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: DISTRIBUTED_QUEUE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<DistributedQueueModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
