import { readFileSync } from 'fs';
import { join } from 'path';
import { loadScripts } from './script-loader';
import { ScriptOutcome, failOutcome, takeOutcome, UnexpectedOutcomeError } from './script-outcome';

const lua = readFileSync(join(__dirname, '..', 'scripts', 'includes', 'outcome.lua'), 'utf8');
const camel = (name: string) => name.toLowerCase().replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());

describe('script outcomes', () => {
  it('the Lua list and the TypeScript enum hold the same codes', () => {
    const fromLua = Object.fromEntries([...lua.matchAll(/^\s+([A-Z_]+) = (\d+),/gm)].map(([, name, code]) => [camel(name), Number(code)]));
    const fromTs = Object.fromEntries(Object.entries(ScriptOutcome).filter(([, v]) => typeof v === 'number'));
    expect(fromLua).toEqual(fromTs);
  });
  it('scripts return codes, not words', () => {
    for (const { command, lua: source } of loadScripts()) {
      expect([command, source.match(/return\s+'[a-z]+'|return\s+\{\s*'[a-zA-Z]+'/g)]).toEqual([command, null]);
    }
  });
  it('maps codes to results and refuses unknown ones', () => {
    expect(failOutcome(ScriptOutcome.Buried)).toBe('dead');
    expect(takeOutcome(String(ScriptOutcome.NotOurs))).toBe('lost');
    expect(() => failOutcome(99)).toThrow(UnexpectedOutcomeError);
  });
});
