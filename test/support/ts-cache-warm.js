/**
 * `node test/support/ts-cache-warm.js`: fills the children's compile cache (see ts-cache-register.js) with every
 * TypeScript file a child may load: the library, the sample applications, test/support and test/fixtures.
 * The e2e globalSetup runs it once before the test files start. Without it, on a fresh machine (CI's clean
 * clone), the first children of every Jest worker each compiled the library at once, beside the workers' own
 * ts-jest compiling, and a child took more than 30 s to start (groups.e2e-spec's two workers, 2026-11-29): two
 * cold children take ~7.6 s to start on an idle machine, warm ones ~1 s.
 */
'use strict';
const fs = require('fs');
const path = require('path');
const { compile } = require('./ts-cache-register');

const root = path.resolve(__dirname, '..', '..');
const DIRS = ['libs/distributed-queue/src', 'apps', 'test/support', 'test/fixtures'];

function* sources(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') yield* sources(file);
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !/\.(e2e-)?spec\.ts$/.test(entry.name)) {
      yield file;
    }
  }
}

const started = Date.now();
let n = 0;
for (const dir of DIRS) {
  const full = path.join(root, dir);
  if (!fs.existsSync(full)) continue;
  for (const file of sources(full)) {
    compile(fs.readFileSync(file, 'utf8'), file);
    n += 1;
  }
}
process.stdout.write(`${n} files in ${Date.now() - started} ms`);
