/**
 * Aims a fault at the windows between a store's Redis calls: wraps the client a store holds (its private
 * `client`) so that `onCall(n)` runs right after its n-th call answered, before the caller goes on (a crash
 * test SIGKILLs the process there, an outage test pauses Redis there).
 */
export function afterEachCall(store: object, onCall: (n: number) => void): void {
  const holder = store as { client: object };
  let calls = 0;
  holder.client = new Proxy(holder.client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const reply = value.apply(target, args);
        if (!(reply instanceof Promise)) return reply;
        return reply.then((answer: unknown) => {
          onCall(++calls);
          return answer;
        });
      };
    },
  });
}
