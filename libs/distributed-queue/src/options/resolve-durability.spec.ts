import { InvalidOptionsError, InvalidSubmitOptionsError } from '../errors';
import { callDurability, resolveDurability } from './resolve-durability';
import { resolveModuleOptions } from './resolve-options';

describe('durability options', () => {
  it('module option: defaults, bounds, named in the error', () => {
    expect(resolveDurability(undefined, 5000)).toBeNull();
    expect(resolveDurability({ replicas: 1 }, 5000)).toEqual({ replicas: 1, timeoutMs: 1000 });
    expect(() => resolveDurability({ replicas: 0 }, 5000)).toThrow(/durability\.replicas/);
    expect(() => resolveDurability({ replicas: 1.5 }, 5000)).toThrow(InvalidOptionsError);
    expect(() => resolveDurability({} as never, 5000)).toThrow(/durability\.replicas.*required/);
    expect(() => resolveDurability({ replicas: 1, timeoutMs: 5000 }, 5000)).toThrow(/durability\.timeoutMs/);
    expect(() => resolveDurability({ replicas: 1, tiemoutMs: 10 } as never, 5000)).toThrow(/durability\.tiemoutMs/);
    expect(() => resolveModuleOptions({ durability: { replicas: 1, timeoutMs: 2000 }, redisTimeoutMs: 2000 })).toThrow(/durability\.timeoutMs/);
    expect(resolveModuleOptions({ durability: { replicas: 2 } }).durability).toEqual({ replicas: 2, timeoutMs: 1000 });
    expect(resolveModuleOptions({}).durability).toBeNull();
  });

  it('is refused with service.url (no Redis there)', () => {
    const service = { appName: 'a', secret: 's'.repeat(32), publicUrl: 'http://a:1', url: 'http://scheduler:4000' };
    expect(() => resolveModuleOptions({ mode: 'service', service, durability: { replicas: 1 } })).toThrow(/"durability": needs Redis/);
  });

  it('per call: merged over the module option, false turns it off, refused without it', () => {
    const module = { replicas: 1, timeoutMs: 1000 };
    expect(callDurability(undefined, module, 5000)).toBe(module);
    expect(callDurability(undefined, null, 5000)).toBeNull();
    expect(callDurability(false, module, 5000)).toBeNull();
    expect(callDurability(false, null, 5000)).toBeNull();
    expect(callDurability({ timeoutMs: 200 }, module, 5000)).toEqual({ replicas: 1, timeoutMs: 200 });
    expect(callDurability({ replicas: 2 }, module, 5000)).toEqual({ replicas: 2, timeoutMs: 1000 });
    expect(() => callDurability({ replicas: 1 }, null, 5000)).toThrow(/module option "durability"/);
    expect(() => callDurability({ replicas: 0 }, module, 5000)).toThrow(InvalidSubmitOptionsError);
    expect(() => callDurability({ timeoutMs: 5000 }, module, 5000)).toThrow(/durability\.timeoutMs/);
    expect(() => callDurability({ replica: 1 } as never, module, 5000)).toThrow(/durability\.replica/);
    expect(() => callDurability(true as never, module, 5000)).toThrow(InvalidSubmitOptionsError);
  });
});
