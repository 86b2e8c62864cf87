// The package's README and docs, generated from the repository's at build time (one source: README.md):
//  - libs/distributed-queue/README.md: the root README without what only the repository has (its first code
//    block, the commands that start the sample and run the tests; the "Sample application" and "Development"
//    sections), screenshots named rather than embedded (the package ships no images);
//  - libs/distributed-queue/docs/*.md: the documentation pages the README links to (docs/*.md), so that its
//    links reach them in the installed package; figures (screenshots, charts) named rather than embedded, and
//    links to the repository-only sections of the README as plain text. Neither is committed (.gitignore):
//    `npm run build` writes both.
const { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } = require('fs');
const { join } = require('path');

const REPO_ONLY = ['Sample application', 'Development'];

/** The package README of `readme` (the root README's text). */
function packageReadme(readme) {
  let text = readme.replace(/^(# [^\n]+\n\n)```sh\n[\s\S]*?\n```\n\n/, '$1');
  for (const title of REPO_ONLY) {
    text = text.replace(new RegExp(`\\n## ${title}\\n[\\s\\S]*?(?=\\n## |$)`), '\n');
  }
  text = text.replace(/!\[([^\]]*)\]\((docs\/[\w.-]+\.png)\)/g, '*$1: a screenshot in the source repository ($2).*');
  return `${text.trimEnd()}\n`;
}

/** A docs page (`text`) as the package ships it: no figure embedded, no link to what the package lacks. */
function packageDoc(text) {
  const repoOnly = REPO_ONLY.map((title) => title.toLowerCase().replace(/ /g, '-')).join('|');
  return text
    .replace(/!\[([^\]]*)\]\(([\w./-]+\.(?:png|svg))\)/g, '*$1: a figure in the source repository (docs/$2).*')
    .replace(new RegExp(`\\[([^\\]]+)\\]\\(\\.\\./README\\.md#(?:${repoOnly})\\)`, 'g'), "$1 (in the source repository's README)");
}

/** Writes the package's README and docs. */
function writePackageDocs(root = join(__dirname, '..')) {
  const lib = join(root, 'libs', 'distributed-queue');
  writeFileSync(join(lib, 'README.md'), packageReadme(readFileSync(join(root, 'README.md'), 'utf8')));
  rmSync(join(lib, 'docs'), { recursive: true, force: true });
  mkdirSync(join(lib, 'docs'));
  for (const file of readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md'))) {
    writeFileSync(join(lib, 'docs', file), packageDoc(readFileSync(join(root, 'docs', file), 'utf8')));
  }
  copyFileSync(join(root, 'CHANGELOG.md'), join(lib, 'CHANGELOG.md'));
}

module.exports = { packageReadme, packageDoc, writePackageDocs };
if (require.main === module) writePackageDocs();
