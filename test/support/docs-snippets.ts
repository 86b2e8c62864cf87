/**
 * For the specs that check a guide against its fixtures (testing/testing-guide.spec.ts,
 * migration-guide.spec.ts): a fixture marks each example between `// snippet: <name>` and `// end-snippet`;
 * the guide shows it in a ```ts block right under `<!-- snippet: <name> -->`, the same text (indentation aside).
 * A block right under `<!-- bullmq -->` is another library's code, shown for comparison (`foreign`).
 * Not part of the public API (not exported from index.ts; left out of the package build).
 */
import { readFileSync } from 'fs';
import { join } from 'path';

/** The repository's root. */
export const REPO_ROOT = join(__dirname, '../..');

/** A ```ts block of a guide. */
export interface GuideBlock {
  /** The name of the `<!-- snippet: <name> -->` line right above it, or null. */
  name: string | null;
  /** Marked `<!-- bullmq -->`: another library's code, not one of the fixtures'. */
  foreign: boolean;
  code: string;
  /** Its opening fence's line (1-based). */
  line: number;
}

/** `lines` without their common indentation (blank lines left out of the count), trailing spaces trimmed. */
export function dedent(lines: string[]): string {
  const indents = lines.filter((l) => l.trim() !== '').map((l) => l.length - l.trimStart().length);
  const cut = indents.length === 0 ? 0 : Math.min(...indents);
  return lines.map((l) => l.slice(cut).trimEnd()).join('\n');
}

/** The `// snippet: <name>` ... `// end-snippet` regions of a fixture (a path from the repository's root), dedented, by name. */
export function regionsOf(file: string): Map<string, string> {
  const regions = new Map<string, string>();
  let open: { name: string; lines: string[] } | null = null;
  readFileSync(join(REPO_ROOT, file), 'utf8').split('\n').forEach((line, i) => {
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

/** The ```ts blocks of a guide's markdown, each with the marker line right above it. */
export function blocksOf(markdown: string): GuideBlock[] {
  const blocks: GuideBlock[] = [];
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
    const above = j >= 0 ? lines[j].trim() : '';
    const marker = /^<!-- snippet: ([\w-]+) -->$/.exec(above);
    const start = i;
    const code: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) code.push(lines[i]);
    blocks.push({ name: marker ? marker[1] : null, foreign: above === '<!-- bullmq -->', code: dedent(code), line: start + 1 });
  }
  return blocks;
}
