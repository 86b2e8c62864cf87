/**
 * What a handler or listener may throw or return that JavaScript allows and no one should (handler-garbage,
 * service-handler-garbage): each outcome by name, `throw:` ones failing the attempt, `return:` ones completing it.
 */
const cyclic: Record<string, unknown> = { a: 1 };
cyclic.self = cyclic;
const causeCycle = new Error('with a cyclic cause');
(causeCycle as Error & { cause: unknown }).cause = cyclic;
const hostile = new Proxy({}, { get: () => { throw new Error('no'); }, has: () => { throw new Error('no'); }, ownKeys: () => { throw new Error('no'); }, getPrototypeOf: () => { throw new Error('no'); } });

/** What each task's handler throws (`throw:`) or returns (`return:`). */
export const OUTCOMES: Record<string, () => unknown> = {
  'throw:null': () => { throw null; },
  'throw:undefined': () => { throw undefined; },
  'throw:42': () => { throw 42; },
  'throw:string': () => { throw 'a string'; },
  'throw:object': () => { throw {}; },
  'throw:cyclic': () => { throw cyclic; },
  'throw:symbol': () => { throw Symbol('s'); },
  'throw:function': () => { throw () => 1; },
  'throw:cause-cycle': () => { throw causeCycle; },
  'throw:bad-toString': () => { throw { toString: () => { throw new Error('toString'); } }; },
  'throw:proxy': () => { throw hostile; },
  'throw:2mb': () => { throw new Error('m'.repeat(2 * 1024 * 1024)); },
  'throw:reject-null': () => Promise.reject(null),
  'throw:error-getters': () => { throw new (class extends Error { get message(): string { throw new Error('getter'); } })(); },
  'throw:then-getter': () => ({ get then() { throw new Error('then'); } }),
  'throw:then-throws': () => ({ then: () => { throw new Error('then'); } }),
  'return:cyclic': () => cyclic,
  'return:bigint': () => BigInt(1),
  'return:function': () => () => 1,
  'return:symbol': () => Symbol('r'),
};
