/**
 * One README source (issue 33, item 5): the package's README (what npm shows) is generated from the
 * repository's at build time by scripts/package-readme.js, with the guides it links to. Needs no Redis.
 * The packed tarball's files are test/package-consumer.e2e-spec.ts's.
 */
import * as fs from 'fs';
import * as path from 'path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { packageReadme } = require('../scripts/package-readme.js') as { packageReadme: (readme: string) => string };

const ROOT = path.resolve(__dirname, '..');
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const packaged = packageReadme(readme);
const sections = (text: string): string[] => [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]);

describe('the package README, generated from the repository README', () => {
  it('has every section of the repository README but the repository-only ones, in order', () => {
    expect(sections(packaged)).toEqual(sections(readme).filter((s) => s !== 'Sample application' && s !== 'Development'));
    expect(sections(packaged)).toContain('Unit tests without Redis');
    expect(sections(packaged)).toContain('Recurring tasks (distributed cron)');
  });

  it('starts with the title and the library, not with the commands of this repository', () => {
    expect(packaged.startsWith('# nestjs-distributed-queue\n\nDistributed queues for NestJS on Redis')).toBe(true);
    expect(packaged).not.toContain('npm ci && npm test');
  });

  it('links only to what the package holds (its docs and changelog) or to its own sections; embeds no image', () => {
    const shipped = new Set(['CHANGELOG.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]);
    const anchors = new Set(sections(packaged).concat([...packaged.matchAll(/^### (.+)$/gm)].map((m) => m[1])).map((title) => title.toLowerCase().replace(/[^\w\s-]/g, '').trim().replace(/\s/g, '-')));
    const links = [...packaged.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]).filter((target) => !/^https?:/.test(target));
    expect(links.filter((target) => (target.startsWith('#') ? !anchors.has(target.slice(1)) : !shipped.has(target)))).toEqual([]);
    expect(packaged).not.toMatch(/!\[[^\]]*\]\(/);
  });

  it('the install lines pin @nestjs/schedule to each Nest major', () => {
    expect(packaged).toContain('@nestjs/common@^11 @nestjs/core@^11 @nestjs/schedule@^6');
    expect(packaged).toContain('@nestjs/common@^12 @nestjs/core@^12 @nestjs/schedule@^12');
  });
});
