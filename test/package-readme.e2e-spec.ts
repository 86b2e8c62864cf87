/**
 * One README source (issue 33, item 5): the package's README (what npm shows) is generated from the
 * repository's at build time by scripts/package-readme.js, with the guides it links to. Needs no Redis.
 * The packed tarball's files are test/package-consumer.e2e-spec.ts's.
 */
import * as fs from 'fs';
import * as path from 'path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { packageReadme, packageDoc } = require('../scripts/package-readme.js') as { packageReadme: (readme: string) => string; packageDoc: (text: string) => string };

const ROOT = path.resolve(__dirname, '..');
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const packaged = packageReadme(readme);
const sections = (text: string): string[] => [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
/** GitHub's anchors of a markdown text's headings (outside code blocks). */
const anchorsOf = (text: string): Set<string> =>
  new Set(
    text
      .replace(/^```[\s\S]*?^```/gm, '')
      .split('\n')
      .map((line) => /^#{1,6} (.+)$/.exec(line)?.[1])
      .filter((title): title is string => title !== undefined)
      .map((title) => title.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-')),
  );
const DOC_PAGES = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));

describe('the package README, generated from the repository README', () => {
  it('has every section of the repository README but the repository-only ones, in order', () => {
    expect(sections(packaged)).toEqual(sections(readme).filter((s) => s !== 'Sample application' && s !== 'Development'));
    expect(sections(packaged)).toEqual(['Install', 'Quick start', 'Documentation']);
  });

  it('starts with the title and the library, not with the commands of this repository', () => {
    expect(packaged.startsWith('# nestjs-distributed-queue\n\nDistributed queues for NestJS on Redis')).toBe(true);
    expect(packaged).not.toContain('npm ci && npm test');
  });

  it('links only to what the package holds (its docs and changelog) or to its own sections; embeds no image', () => {
    const shipped = new Set(['CHANGELOG.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]);
    const anchors = new Set(sections(packaged).concat([...packaged.matchAll(/^### (.+)$/gm)].map((m) => m[1])).map((title) => title.toLowerCase().replace(/[^\w\s-]/g, '').trim().replace(/\s/g, '-')));
    const links = [...packaged.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]).filter((target) => !/^https?:/.test(target));
    expect(links.filter((target) => (target.startsWith('#') ? !anchors.has(target.slice(1)) : !shipped.has(target.split('#')[0])))).toEqual([]);
    expect(packaged).not.toMatch(/!\[[^\]]*\]\(/);
  });

  it('its docs pages link only to what the package holds, with anchors that exist there; embed no figure', () => {
    // the package's layout: README.md, CHANGELOG.md and docs/*.md, as the build writes them
    const files = new Map<string, string>([['README.md', packaged], ['CHANGELOG.md', fs.readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8')]]);
    for (const page of DOC_PAGES) files.set(`docs/${page}`, packageDoc(fs.readFileSync(path.join(ROOT, 'docs', page), 'utf8')));
    const broken: string[] = [];
    for (const page of DOC_PAGES) {
      const text = files.get(`docs/${page}`)!;
      expect(text).not.toMatch(/!\[[^\]]*\]\(/);
      for (const [, target] of text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const [file, anchor] = target.split('#', 2);
        const to = file === '' ? `docs/${page}` : path.posix.normalize(path.posix.join('docs', file));
        if (!files.has(to)) broken.push(`docs/${page}: ${target} (no ${to} in the package)`);
        else if (anchor !== undefined && !anchorsOf(files.get(to)!).has(anchor)) broken.push(`docs/${page}: ${target} (no heading #${anchor})`);
      }
    }
    expect(broken).toEqual([]);
    expect(DOC_PAGES.length).toBeGreaterThanOrEqual(20);
  });

  it('the install lines pin @nestjs/schedule to each Nest major', () => {
    expect(packaged).toContain('@nestjs/common@^11 @nestjs/core@^11 @nestjs/schedule@^6');
    expect(packaged).toContain('@nestjs/common@^12 @nestjs/core@^12 @nestjs/schedule@^12');
  });
});
