/**
 * docs/testing.md (the guide to `nestjs-distributed-queue/testing`): its examples compile and run, and the
 * guide shows them as they are. The examples live in test/fixtures/testing-guide-app.ts (the application)
 * and test/fixtures/testing-guide.ts (the tests, registered by the import below), each between
 * `// snippet: <name>` and `// end-snippet`; the guide shows each under `<!-- snippet: <name> -->`, and
 * every TypeScript block of the guide is one of them.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import '../../../../test/fixtures/testing-guide';
import { blocksOf, REPO_ROOT as ROOT, regionsOf } from '../../../../test/support/docs-snippets';

const GUIDE = 'docs/testing.md';
const FIXTURES = ['test/fixtures/testing-guide-app.ts', 'test/fixtures/testing-guide.ts'];

describe('docs/testing.md shows the fixtures as they are', () => {
  const regions = new Map<string, string>();
  for (const file of FIXTURES) {
    for (const [name, code] of regionsOf(file)) {
      if (regions.has(name)) throw new Error(`snippet ${name} in two fixtures`);
      regions.set(name, code);
    }
  }
  const blocks = blocksOf(readFileSync(join(ROOT, GUIDE), 'utf8'));

  it('every TypeScript block of the guide is a fixture snippet, shown once', () => {
    expect(blocks.filter((b) => b.name === null).map((b) => `${GUIDE}:${b.line}`)).toEqual([]);
    const names = blocks.map((b) => b.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    expect(names.filter((n) => !regions.has(n!))).toEqual([]);
  });

  it('every fixture snippet is in the guide', () => {
    const shown = new Set(blocks.map((b) => b.name));
    expect([...regions.keys()].filter((n) => !shown.has(n))).toEqual([]);
  });

  it.each([...regions.keys()])('snippet %s is the same text in the guide and in its fixture', (name) => {
    const block = blocks.find((b) => b.name === name);
    expect(block?.code).toBe(regions.get(name));
  });
});
