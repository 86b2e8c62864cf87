import { pruneUnusedFunctions } from './lua-prune';
import { loadScripts } from './script-loader';

describe('pruneUnusedFunctions', () => {
  it('drops the top-level helpers nothing calls, and those only they called; keeps the rest as it was', () => {
    const lua = [
      'local function used(x)', '  return x + 1', 'end',
      'local function onlyForUnused()', '  return 2', 'end',
      'local function unused()', '  return onlyForUnused()', 'end',
      'local function recursive(n)', '  if n > 0 then return recursive(n - 1) end', '  return 0', 'end',
      'local function named() return 1 end', // one line: no `end` line of its own: kept
      'for i = 1, 2 do', '  used(i)', 'end',
      'return used(1)',
    ].join('\n');
    expect(pruneUnusedFunctions(lua)).toBe([
      'local function used(x)', '  return x + 1', 'end',
      'local function named() return 1 end',
      'for i = 1, 2 do', '  used(i)', 'end',
      'return used(1)',
    ].join('\n'));
  });

  it('keeps a helper a comment or a string names (conservative)', () => {
    const lua = ['local function a()', '  return 1', 'end', '-- a is kept for later', 'return 0'].join('\n');
    expect(pruneUnusedFunctions(lua)).toBe(lua);
  });

  it('leaves every loaded script with each helper it calls, and with fewer definitions than its includes give', () => {
    const scripts = loadScripts();
    const submit = scripts.find((s) => s.command === 'dqDelaySubmit')!;
    expect((submit.lua.match(/^local function /gm) ?? []).length).toBeLessThan(60);
    for (const script of scripts) {
      const defined = new Set([...script.lua.matchAll(/^local function ([A-Za-z_][A-Za-z0-9_]*)/gm)].map((m) => m[1]));
      // a call of a name that looks like a helper (camelCase call) and is not defined anywhere would be a pruned one
      const code = script.lua.replace(/--\[\[[\s\S]*?\]\]/g, '').replace(/--.*$/gm, '');
      const called = [...code.matchAll(/(?<![A-Za-z0-9_.:])([a-z][A-Za-z0-9_]*)\(/g)].map((m) => m[1]);
      const builtins = new Set(['tonumber', 'tostring', 'type', 'pairs', 'ipairs', 'unpack', 'error', 'pcall', 'assert', 'select', 'next', 'function', 'rawget', 'rawset', 'setmetatable', 'getmetatable', 'and', 'or', 'not', 'return', 'if', 'elseif', 'while', 'until', 'in']);
      const locals = new Set([...script.lua.matchAll(/local (?:function )?([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
      for (const m of script.lua.matchAll(/function\s*[A-Za-z0-9_.:]*\(([^)]*)\)/g)) for (const param of m[1].split(',')) locals.add(param.trim());
      expect([script.command, called.filter((name) => !builtins.has(name) && !defined.has(name) && !locals.has(name))]).toEqual([script.command, []]);
    }
  });
});
