/**
 * Every snippet compiles (issue 33, item 2): the fixtures the README and docs/ show their TypeScript from are
 * type-checked here with the repository's tsconfig.json, as `tsc --noEmit` would. Jest's ts-jest transpiles
 * each file on its own (isolatedModules) and reports no type error, so without this file a snippet that no
 * longer compiled (a renamed option, a wrong payload, an `@ts-expect-error` that no longer errs) would pass.
 * Which fixtures: every file a page's `<!-- snippet: ... -->` block comes from (docs-snippets.spec,
 * migration-guide.spec, testing-guide.spec check the text against them), found by their snippet markers.
 * Needs no Redis.
 */
import { readdirSync, readFileSync, statSync } from 'fs';
import { join, relative } from 'path';
import * as ts from 'typescript';

const ROOT = join(__dirname, '..');
const FIXTURES = join(ROOT, 'test', 'fixtures');

/** The .ts files under `dir`, recursively. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'consumer' ? [] : tsFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The fixtures that hold docs snippets (a `// snippet: <name>` line), and the files of their directory's app. */
const snippetFiles = tsFiles(FIXTURES).filter((file) => /^\s*\/\/ snippet: [\w-]+\s*$/m.test(readFileSync(file, 'utf8')));

describe('the docs fixtures type-check', () => {
  it('finds the fixtures of every page (the check is not vacuous)', () => {
    const names = snippetFiles.map((file) => relative(ROOT, file));
    expect(names).toEqual(expect.arrayContaining([
      'test/fixtures/readme-quick-start.ts', 'test/fixtures/readme-typed-tasks.ts', 'test/fixtures/readme-snippets.ts',
      'test/fixtures/migration-guide.ts', 'test/fixtures/testing-guide.ts', 'test/fixtures/getting-started/main.ts',
    ]));
  });

  it('reports no TypeScript error in any of them (strict, as tsconfig.json says)', () => {
    const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), { noEmit: true }, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    })!;
    const program = ts.createProgram(snippetFiles, { ...config.options, noEmit: true });
    const errors = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file && d.start !== undefined ? `${relative(ROOT, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : '';
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
    });
    expect(errors).toEqual([]);
  });
});
