import { DynamicModule, Module } from '@nestjs/common';
import { AppModule } from './app.module';
import type { AppOptions } from './app.config';
import { HealthModule } from './health/health.module';

/**
 * The sample as `npm start` serves it: `AppModule` plus `GET /health`. The health endpoint stays out of
 * `AppModule` because @nestjs/terminus 12 is an ES module: Node loads it (`require` of ES modules, Node
 * 20.19+), Jest's CommonJS runtime does not, and the tests load `AppModule` in-process.
 */
@Module({})
export class ServerModule {
  static register(options: AppOptions): DynamicModule {
    return { module: ServerModule, imports: [AppModule.register(options), HealthModule] };
  }
}
