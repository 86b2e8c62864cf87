import type { DiscoveryService, MetadataScanner } from '@nestjs/core';

/** A method carrying a decorator's metadata, with the instance it belongs to. */
export interface DecoratedMethod<M> {
  instance: object;
  className: string;
  methodName: string;
  method: (...args: unknown[]) => unknown;
  metadata: M;
}

/** The methods of the application's (static) providers and controllers that carry metadata `key`. */
export function decoratedMethods<M>(discovery: DiscoveryService, scanner: MetadataScanner, key: string): DecoratedMethod<M>[] {
  const found: DecoratedMethod<M>[] = [];
  for (const wrapper of [...discovery.getProviders(), ...discovery.getControllers()]) {
    const instance = wrapper.instance as Record<string, unknown> | undefined;
    if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
    const prototype = Object.getPrototypeOf(instance) as object | null;
    if (!prototype) continue;
    for (const methodName of scanner.getAllMethodNames(prototype)) {
      const method = instance[methodName];
      if (typeof method !== 'function') continue;
      const metadata = Reflect.getMetadata(key, method) as M | undefined;
      if (metadata !== undefined) {
        found.push({ instance, className: prototype.constructor.name, methodName, method: method as DecoratedMethod<M>['method'], metadata });
      }
    }
  }
  return found;
}
