/**
 * The README and every page of docs/: every TypeScript snippet compiles, and the page shows it as it is
 * (issue 33, item 2). Each snippet lives in a fixture between `// snippet: <name>` and `// end-snippet`; a
 * page shows it in a ```ts block right under `<!-- snippet: <name> -->` (a block under `<!-- bullmq -->` is
 * another library's code, shown for comparison in the migration guide). A fragment (a call, a decorator, a
 * module's options) gets its context (imports, the service it is called on, the class a decorator goes on)
 * from its fixture, outside the region. The fixtures are imported below (but getting-started/main.ts, which
 * starts an application: test/getting-started.e2e-spec.ts runs it), so ts-jest transpiles them;
 * test/docs-typecheck.e2e-spec.ts type-checks them all (the `@ts-expect-error` lines of the typed-tasks
 * snippet included: it fails should one compile). The testing guide and the migration guide have fixtures
 * and specs of their own.
 */
import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';
import '../../../test/fixtures/flows-readme';
import '../../../test/fixtures/getting-started/app.module';
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
import { blocksOf, REPO_ROOT, regionsOf, type GuideBlock } from '../../../test/support/docs-snippets';

/** The fixtures of the snippets of the README and the topic pages: each of their regions is shown on a page. */
const DOCS_FIXTURES = [
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
  'test/fixtures/getting-started/app.module.ts',
  'test/fixtures/getting-started/main.ts',
];
/** Guides with fixtures and a spec of their own (testing/testing-guide.spec.ts, migration-guide.spec.ts). */
const GUIDES = ['docs/testing.md', 'docs/migrating-from-bullmq.md'];

/** The README and every page of docs/ but the guides, as paths from the repository's root. */
const PAGES = ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)].filter((p) => !GUIDES.includes(p));

describe('the README and docs/ show their snippets as they are in the fixtures', () => {
  const regions = new Map<string, { file: string; code: string }>();
  for (const file of DOCS_FIXTURES) {
    for (const [name, code] of regionsOf(file)) {
      if (regions.has(name)) throw new Error(`snippet ${name} in ${regions.get(name)!.file} and ${file}`);
      regions.set(name, { file, code });
    }
  }
  const blocks: (GuideBlock & { page: string })[] = PAGES.flatMap((page) => blocksOf(readFileSync(join(REPO_ROOT, page), 'utf8')).map((b) => ({ ...b, page })));
  const ours = blocks.filter((b) => !b.foreign);

  it('the pages have TypeScript blocks (the checks below are not vacuous)', () => {
    expect(ours.length).toBeGreaterThanOrEqual(15);
    expect(new Set(ours.map((b) => b.page)).size).toBeGreaterThanOrEqual(9);
  });

  it('every TypeScript block is marked with a fixture snippet, shown once per page', () => {
    expect(ours.filter((b) => b.name === null).map((b) => `${b.page}:${b.line}`)).toEqual([]);
    const keys = ours.map((b) => `${b.page} ${b.name}`);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
    expect(ours.filter((b) => !regions.has(b.name!)).map((b) => `${b.page}:${b.line} ${b.name}`)).toEqual([]);
  });

  it("another library's code is shown only in the migration guide", () => {
    expect(blocks.filter((b) => b.foreign).map((b) => `${b.page}:${b.line}`)).toEqual([]);
  });

  it('every snippet of the docs fixtures is shown on a page', () => {
    const shown = new Set(ours.map((b) => b.name));
    const mine = [...regions.keys()];
    expect(mine.filter((n) => !shown.has(n))).toEqual([]);
  });

  it.each(ours.filter((b) => b.name !== null).map((b) => [`${b.page}:${b.line}`, b.name!, b] as const))(
    '%s (%s) is the same text as its fixture',
    (_, name, block) => {
      expect(block.code).toBe(regions.get(name)?.code);
    },
  );
});
