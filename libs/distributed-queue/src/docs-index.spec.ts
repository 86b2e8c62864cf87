/**
 * docs/errors.md and docs/index.md stay in step with the package and the pages they link:
 *  - every error class the package exports has a `## <Name>` section in docs/errors.md, and every `## `
 *    section there names one;
 *  - every relative link of docs/index.md (and of docs/errors.md) resolves: the file exists, and a
 *    `#anchor` is a heading of that file as GitHub renders its anchor;
 *  - every page of docs/ is linked from docs/index.md and from the README;
 *  - every relative link of every page of docs/ and of the README resolves (the file, and its anchor).
 */
import { existsSync, readdirSync, readFileSync } from 'fs';
import { dirname, join, normalize, relative } from 'path';
import * as api from './index';

const REPO_ROOT = join(__dirname, '../../..');
const DOCS = join(REPO_ROOT, 'docs');

const read = (file: string): string => readFileSync(file, 'utf8');

/** The lines of a markdown text outside fenced code blocks. */
function proseLines(markdown: string): string[] {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker && (fence === null || marker === fence)) {
      fence = fence === null ? marker : null;
      continue;
    }
    if (fence === null) lines.push(line);
  }
  return lines;
}

/** The text of the ATX headings (`#` to `######`) of a markdown text, outside code blocks. */
function headings(markdown: string, level?: number): string[] {
  return proseLines(markdown)
    .map((line) => /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && (level === undefined || m[1].length === level))
    .map((m) => m[2]);
}

/** The anchor GitHub gives a heading: lower case, punctuation removed (but `-` and `_`), spaces to hyphens. */
function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a file's headings, with GitHub's `-1`, `-2`... for repeated ones. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const heading of headings(markdown)) {
    const anchor = githubAnchor(heading);
    const n = seen.get(anchor) ?? 0;
    seen.set(anchor, n + 1);
    anchors.add(n === 0 ? anchor : `${anchor}-${n}`);
  }
  return anchors;
}

/** The targets of the inline links `[text](target)` of a markdown text, outside code blocks. */
function linksOf(markdown: string): string[] {
  const links: string[] = [];
  for (const line of proseLines(markdown)) {
    // NOTE: code spans go first (a link's text may hold one; the rest of a span is no link)
    for (const m of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) links.push(m[1]);
  }
  return links;
}

const isRelative = (target: string): boolean => !/^[a-z][a-z0-9+.-]*:/i.test(target);

/** The relative links of a page (of docs/, or `../README.md`) that do not resolve (a missing file, or an anchor no heading has). */
function brokenLinks(page: string): string[] {
  const from = join(DOCS, page);
  const broken: string[] = [];
  for (const target of linksOf(read(from)).filter(isRelative)) {
    const [path, anchor] = target.split('#', 2) as [string, string | undefined];
    const file = path === '' ? from : normalize(join(dirname(from), decodeURIComponent(path)));
    if (!existsSync(file)) {
      broken.push(`${target}: no file ${relative(REPO_ROOT, file)}`);
      continue;
    }
    if (anchor !== undefined && !anchorsOf(read(file)).has(decodeURIComponent(anchor))) {
      broken.push(`${target}: no heading of ${relative(REPO_ROOT, file)} has the anchor #${anchor}`);
    }
  }
  return broken;
}

/** The names of the exported values that are classes extending Error. */
const exportedErrors = Object.entries(api as Record<string, unknown>)
  .filter(([, value]) => typeof value === 'function' && (value as { prototype?: unknown }).prototype instanceof Error)
  .map(([name]) => name)
  .sort();

describe('githubAnchor', () => {
  it.each([
    ['Install', 'install'],
    ['Recurring tasks (distributed cron)', 'recurring-tasks-distributed-cron'],
    ['Dedupe, throttle and debounce', 'dedupe-throttle-and-debounce'],
    ['Groups: fair share per tenant', 'groups-fair-share-per-tenant'],
    ['Options are checked at start-up', 'options-are-checked-at-start-up'],
    ['Events (`@OnTaskEvent`)', 'events-ontaskevent'],
    ["Task outcomes (a handler's signal, dead letters)", 'task-outcomes-a-handlers-signal-dead-letters'],
    ['HTTP statuses (httpErrorOf)', 'http-statuses-httperrorof'],
  ])('%s → #%s', (heading, anchor) => {
    expect(githubAnchor(heading)).toBe(anchor);
  });
});

describe('docs/errors.md', () => {
  const markdown = read(join(DOCS, 'errors.md'));
  const sections = headings(markdown, 2);

  it('the package exports error classes (the check below is not vacuous)', () => {
    expect(exportedErrors.length).toBeGreaterThanOrEqual(40);
    expect(exportedErrors).toEqual(expect.arrayContaining(['DistributedQueueError', 'InvalidOptionsError', 'RedisUnavailableError', 'TaskDeadError']));
  });

  it('has a "## <Name>" section for every exported error class', () => {
    expect(exportedErrors.filter((name) => !sections.includes(name))).toEqual([]);
  });

  it('every "## " section names an exported error class, once', () => {
    expect(sections.filter((name) => !exportedErrors.includes(name))).toEqual([]);
    expect(sections.filter((name, i) => sections.indexOf(name) !== i)).toEqual([]);
  });

  it('its relative links resolve (its index included)', () => {
    expect(brokenLinks('errors.md')).toEqual([]);
  });
});

describe('docs/index.md', () => {
  const markdown = read(join(DOCS, 'index.md'));

  it('every relative link resolves: the file exists, and an anchor is a heading of that file', () => {
    expect(linksOf(markdown).filter(isRelative).length).toBeGreaterThan(0);
    expect(brokenLinks('index.md')).toEqual([]);
  });

  it('links every page of docs/', () => {
    const linked = new Set(
      linksOf(markdown)
        .filter(isRelative)
        .map((target) => normalize(join(DOCS, decodeURIComponent(target.split('#')[0])))),
    );
    const pages = readdirSync(DOCS).filter((name) => name.endsWith('.md') && name !== 'index.md');
    expect(pages.length).toBeGreaterThan(0);
    expect(pages.filter((name) => !linked.has(join(DOCS, name)))).toEqual([]);
  });

  it('links sections of the topic pages, not only the pages', () => {
    expect(linksOf(markdown).filter((target) => isRelative(target) && target.includes('#')).length).toBeGreaterThanOrEqual(40);
  });
});

describe('every page of docs/ and the README', () => {
  const pages = readdirSync(DOCS).filter((name) => name.endsWith('.md'));

  it.each(['../README.md', ...pages])('%s: every relative link resolves (file and anchor)', (page) => {
    expect(brokenLinks(page)).toEqual([]);
  });

  it('the README links every topic page of docs/ and the index', () => {
    const linked = new Set(linksOf(read(join(REPO_ROOT, 'README.md'))).filter(isRelative).map((target) => target.split('#')[0]));
    expect(pages.filter((name) => !linked.has(`docs/${name}`))).toEqual([]);
  });
});
