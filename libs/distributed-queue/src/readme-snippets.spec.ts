/**
 * README.md: every TypeScript snippet compiles, and the README shows it as it is (issue 33, item 2). Each
 * snippet lives in a fixture between `// snippet: <name>` and `// end-snippet`; the README shows it in a
 * ```ts block right under `<!-- snippet: <name> -->`. A fragment (a call, a decorator, a module's options)
 * gets its context (imports, the service it is called on, the class a decorator goes on) from its fixture,
 * outside the region. The fixtures are imported below, so ts-jest compiles them and `tsc --noEmit` type-checks
 * them (the `@ts-expect-error` lines of the typed-tasks snippet included: tsc fails should one compile).
 * The README's `clock` block is docs/testing.md's (test/fixtures/testing-guide.ts; testing/testing-guide.spec.ts
 * checks it too): its regions are looked up here, but only the readme fixtures' must all be shown.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import '../../../test/fixtures/flows-readme';
import '../../../test/fixtures/progress-readme';
import '../../../test/fixtures/readme-cron';
import '../../../test/fixtures/readme-dashboard';
import '../../../test/fixtures/readme-health';
import '../../../test/fixtures/readme-ordered';
import '../../../test/fixtures/readme-quick-start';
import '../../../test/fixtures/readme-snippets';
import '../../../test/fixtures/readme-task-events';
import '../../../test/fixtures/readme-typed-tasks';
import '../../../test/fixtures/results-readme';
import { blocksOf, REPO_ROOT, regionsOf } from '../../../test/support/docs-snippets';

const README = 'README.md';
/** The fixtures of the README's own snippets: each of their regions is shown in the README. */
const README_FIXTURES = [
  'test/fixtures/readme-quick-start.ts',
  'test/fixtures/readme-ordered.ts',
  'test/fixtures/readme-typed-tasks.ts',
  'test/fixtures/readme-task-events.ts',
  'test/fixtures/results-readme.ts',
  'test/fixtures/progress-readme.ts',
  'test/fixtures/readme-cron.ts',
  'test/fixtures/readme-snippets.ts',
  'test/fixtures/flows-readme.ts',
  'test/fixtures/readme-health.ts',
  'test/fixtures/readme-dashboard.ts',
];
/** Fixtures of a guide whose snippets the README may show as well (not all of them). */
const GUIDE_FIXTURES = ['test/fixtures/testing-guide-app.ts', 'test/fixtures/testing-guide.ts'];

describe('README.md shows its snippets as they are in the fixtures', () => {
  const regions = new Map<string, { file: string; code: string }>();
  for (const file of [...README_FIXTURES, ...GUIDE_FIXTURES]) {
    for (const [name, code] of regionsOf(file)) {
      if (regions.has(name)) throw new Error(`snippet ${name} in ${regions.get(name)!.file} and ${file}`);
      regions.set(name, { file, code });
    }
  }
  const blocks = blocksOf(readFileSync(join(REPO_ROOT, README), 'utf8'));

  it('the README has TypeScript blocks', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(17);
  });

  it('every TypeScript block of the README is marked, with a fixture snippet, shown once', () => {
    expect(blocks.filter((b) => b.name === null).map((b) => `${README}:${b.line}`)).toEqual([]);
    const names = blocks.map((b) => b.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    expect(names.filter((n) => !regions.has(n!))).toEqual([]);
  });

  it('every snippet of the readme fixtures is in the README', () => {
    const shown = new Set(blocks.map((b) => b.name));
    const ours = [...regions].filter(([, r]) => README_FIXTURES.includes(r.file)).map(([name]) => name);
    expect(ours.filter((n) => !shown.has(n))).toEqual([]);
  });

  it.each(blocks.filter((b) => b.name !== null).map((b) => [b.name!, b] as const))(
    'README snippet %s is the same text as its fixture',
    (name, block) => {
      expect(block.code).toBe(regions.get(name)?.code);
    },
  );
});
