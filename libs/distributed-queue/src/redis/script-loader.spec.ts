import { loadScripts } from './script-loader';

describe('loadScripts', () => {
  const scripts = loadScripts();
  it('names commands after files and counts keys from the file name', () => {
    const take = scripts.find((s) => s.command === 'dqDelayTake');
    expect(take?.numberOfKeys).toBe(15);
    expect(scripts.find((s) => s.command === 'dqDelayDeadRedrive')?.numberOfKeys).toBe(5);
  });
  it('inlines every include', () => {
    for (const script of scripts) expect(script.lua).not.toMatch(/@include/);
    expect(scripts.find((s) => s.command === 'dqDelayTake')?.lua).toContain('local function parseRecord');
  });
  it('keeps every script ASCII: one byte per character, so its sha is the same however its text is read', () => {
    const outside = scripts.filter((s) => /[^\x00-\x7f]/.test(s.lua)).map((s) => s.command);
    expect(outside).toEqual([]);
  });
  it('declares the slot guard in every script that touches a key it builds itself (the waiting set\'s chunks and count)', () => {
    const buildsKeys = (lua: string): boolean => /wsChunkKey\(|redis\.p?call\('\w+', [^,)]*\.\. *'/.test(lua);
    expect(scripts.filter((s) => buildsKeys(s.lua) && !s.slotGuard).map((s) => s.command)).toEqual([]);
    expect(scripts.filter((s) => s.slotGuard).map((s) => s.command)).toEqual(expect.arrayContaining(['dqDelaySubmit', 'dqDelayTake', 'dqDelayFail', 'dqCronAdvance']));
    expect(scripts.find((s) => s.command === 'dqRouteTake')?.slotGuard).toBe(false);
  });
  it('declares the slot guard in every script that keeps a reply for a repeated call (durable writes never run after an ASK)', () => {
    const keeps = scripts.filter((s) => s.lua.includes('keepReply(')).map((s) => s.command).sort();
    expect(keeps).toEqual(['dqDelayDeadRedrive', 'dqDelayDedupe', 'dqDelaySubmit', 'dqRoutePush', 'dqRouteRedrive']);
    expect(scripts.filter((s) => keeps.includes(s.command) && !s.slotGuard)).toEqual([]);
  });
});
