import { readFileSync } from 'fs';
import { join } from 'path';
import { resolveDashboardOptions } from './dashboard-options';

describe('resolveDashboardOptions', () => {
  it('lists exactly the members of DashboardOptions and suggests the closest', () => {
    const text = readFileSync(join(__dirname, 'dashboard-options.ts'), 'utf8');
    const body = text.slice(text.indexOf('export interface DashboardOptions '), text.indexOf('\n}'));
    const declared = [...body.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1]).sort();
    let message = '';
    try {
      resolveDashboardOptions({ tokn: 'x' } as never);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/"dashboard.tokn": unknown option \(did you mean token\?\)/);
    expect(/\(known: ([^)]*)\)/.exec(message)![1].split(', ').sort()).toEqual(declared);
  });

  it('names NaN in the session lifetime message', () => {
    expect(() => resolveDashboardOptions({ token: 'x'.repeat(16), sessionTtlMs: Number.NaN })).toThrow(/got NaN/);
  });
});
