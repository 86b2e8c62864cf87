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

const ROOT = join(__dirname, '../../../..');
const GUIDE = 'docs/testing.md';
const FIXTURES = ['test/fixtures/testing-guide-app.ts', 'test/fixtures/testing-guide.ts'];

/** `lines` without their common indentation (blank lines left out of the count), trailing spaces trimmed. */
function dedent(lines: string[]): string {
  const indents = lines.filter((l) => l.trim() !== '').map((l) => l.length - l.trimStart().length);
  const cut = indents.length === 0 ? 0 : Math.min(...indents);
  return lines.map((l) => l.slice(cut).trimEnd()).join('\n');
}

/** The `// snippet: <name>` ... `// end-snippet` regions of a fixture, dedented, by name. */
function regionsOf(file: string): Map<string, string> {
  const regions = new Map<string, string>();
  let open: { name: string; lines: string[] } | null = null;
  readFileSync(join(ROOT, file), 'utf8').split('\n').forEach((line, i) => {
    const start = /^\s*\/\/ snippet: ([\w-]+)\s*$/.exec(line);
    if (start) {
      if (open) throw new Error(`${file}:${i + 1}: snippet ${start[1]} opens inside snippet ${open.name}`);
      open = { name: start[1], lines: [] };
    } else if (/^\s*\/\/ end-snippet\s*$/.test(line)) {
      if (!open) throw new Error(`${file}:${i + 1}: end-snippet without a snippet`);
      if (regions.has(open.name)) throw new Error(`${file}: snippet ${open.name} twice`);
      regions.set(open.name, dedent(open.lines));
      open = null;
    } else open?.lines.push(line);
  });
  if (open) throw new Error(`${file}: snippet ${(open as { name: string }).name} is not closed`);
  return regions;
}

/** The guide's ```ts blocks: each with the name of the `<!-- snippet: <name> -->` line right above it (or null). */
function blocksOf(markdown: string): { name: string | null; code: string; line: number }[] {
  const blocks: { name: string | null; code: string; line: number }[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i])) {
      if (/^```/.test(lines[i])) {
        // another language's block: skip to its end, so that its closing fence is not taken for an opening one
        for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++);
      }
      continue;
    }
    let j = i - 1;
    while (j >= 0 && lines[j].trim() === '') j--;
    const marker = j >= 0 ? /^<!-- snippet: ([\w-]+) -->$/.exec(lines[j].trim()) : null;
    const start = i;
    const code: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) code.push(lines[i]);
    blocks.push({ name: marker ? marker[1] : null, code: dedent(code), line: start + 1 });
  }
  return blocks;
}

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

describe('README.md shows the testing snippets it marks as they are', () => {
  const regions = new Map<string, string>();
  for (const file of FIXTURES) for (const [name, code] of regionsOf(file)) regions.set(name, code);
  const marked = blocksOf(readFileSync(join(ROOT, 'README.md'), 'utf8')).filter((b) => b.name !== null);

  it('the README marks at least one of them (its "Unit tests without Redis" section)', () => {
    expect(marked.map((b) => b.name)).not.toEqual([]);
  });

  it.each(marked.map((b) => [b.name!, b] as const))('README snippet %s is the same text as its fixture', (name, block) => {
    expect(block.code).toBe(regions.get(name));
  });
});
