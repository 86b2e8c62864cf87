#!/usr/bin/env node
/*
 * `npm start`'s (and `start:scheduler`'s, `start:service`'s) build step: runs `npm run build` unless the last
 * build was of the same sources. The build's inputs (the library's and the samples' sources, the TypeScript,
 * Nest and npm configuration) are hashed; the hash is kept in the library's dist/, which every build of the
 * library empties first, so a build of the library alone (`npm run build -w nestjs-distributed-queue`) is
 * never taken for this one. A build costs ~25 s of CPU; starting the samples again without a change costs none.
 */
const { spawnSync } = require('child_process');
const { createHash } = require('crypto');
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const STAMP = path.join(root, 'libs/distributed-queue/dist/.build-inputs');
const OUTPUTS = ['libs/distributed-queue/dist/index.js', 'dist/apps/orders/main.js', 'dist/apps/scheduler/main.js'];
const DIRS = ['libs/distributed-queue/src', 'apps', 'scripts'];
const FILES = ['package.json', 'package-lock.json', 'nest-cli.json', 'tsconfig.json', 'libs/distributed-queue/package.json',
  'libs/distributed-queue/tsconfig.lib.json', 'apps/orders/tsconfig.app.json', 'apps/scheduler/tsconfig.app.json'];

function* files(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') yield* files(file);
    } else {
      yield file;
    }
  }
}

function inputsHash() {
  const hash = createHash('sha256').update(process.version);
  const all = [...DIRS.flatMap((dir) => [...files(path.join(root, dir))]), ...FILES.map((file) => path.join(root, file))];
  for (const file of all) {
    if (!fs.existsSync(file)) continue;
    hash.update(path.relative(root, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

const before = inputsHash();
const built = OUTPUTS.every((file) => fs.existsSync(path.join(root, file)));
if (built && fs.existsSync(STAMP) && fs.readFileSync(STAMP, 'utf8') === before) {
  console.log('build: up to date (sources unchanged since the last `npm run build`)');
  process.exit(0);
}
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const result = spawnSync(npm, ['run', 'build'], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
// NOTE: the hash taken before the build: a source changed while it ran builds again next time
fs.writeFileSync(STAMP, before);
