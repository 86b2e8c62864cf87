/**
 * A require hook for the test's child processes (see spawnChild in child.ts): compiles .ts files like
 * `ts-node/register/transpile-only` (TypeScript's transpileModule with this repository's tsconfig.json, so
 * decorator metadata is emitted as Nest needs it), but keeps each output in a disk cache keyed by the
 * source's hash and the compiler options. A child then loads the library in well under a second instead
 * of about 3 s of CPU: the suite spawns hundreds of children on a 2-core machine. TypeScript itself is
 * loaded only on a cache miss. Module paths (`nestjs-distributed-queue`) are resolved by tsconfig-paths,
 * registered next to this hook.
 */
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');

const root = path.resolve(__dirname, '..', '..');
const tsconfigText = fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8');
const cacheDir = path.join(os.tmpdir(), 'dq-ts-cache');
let ts;
let compiled;
let salt;

function options() {
  if (!compiled) {
    ts = require('typescript');
    const parsed = ts.parseConfigFileTextToJson(path.join(root, 'tsconfig.json'), tsconfigText);
    const converted = ts.convertCompilerOptionsFromJson(parsed.config.compilerOptions, root);
    compiled = { ...converted.options, sourceMap: false, inlineSourceMap: true, inlineSources: true, declaration: false, noEmit: false };
  }
  return compiled;
}

function cacheKey(source, filename) {
  if (!salt) salt = crypto.createHash('sha1').update(tsconfigText).update(require('typescript/package.json').version).update(process.version).digest('hex');
  return crypto.createHash('sha1').update(salt).update(filename).update('\0').update(source).digest('hex');
}

function compile(source, filename) {
  const file = path.join(cacheDir, cacheKey(source, filename) + '.js');
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    /* not cached yet */
  }
  const compilerOptions = options(); // loads TypeScript
  const output = ts.transpileModule(source, { compilerOptions, fileName: filename, reportDiagnostics: false }).outputText;
  try {
    fs.mkdirSync(cacheDir, { recursive: true });
    // Written under a unique name, then renamed: a reader never sees half a file.
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    fs.writeFileSync(tmp, output);
    fs.renameSync(tmp, file);
  } catch {
    /* a cache that cannot be written only costs time */
  }
  return output;
}

module.exports = { compile };

const defaultJs = require.extensions['.js'];
require.extensions['.ts'] = function (module, filename) {
  if (filename.includes(`${path.sep}node_modules${path.sep}`)) return defaultJs(module, filename);
  module._compile(compile(fs.readFileSync(filename, 'utf8'), filename), filename);
};
