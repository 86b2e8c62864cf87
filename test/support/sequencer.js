/**
 * Runs the longest test files first, by the durations kept in test/support/durations.json (seconds, from a
 * full run: `node scripts/test-durations.js <jest --json output>` writes it). Jest's own sequencer does so only
 * from its cache of an earlier run on the same machine; a clean clone (CI) has none, and Jest then goes by file
 * size: a long file that is short to read (a one-cell scale test) started last, and the run waited on it
 * alone for more than a minute. A file not in the list goes by Jest's cached time, else counts as 5 s.
 */
'use strict';
const path = require('path');
const Sequencer = require('@jest/test-sequencer').default;

const root = path.resolve(__dirname, '..', '..');
let known = {};
try {
  known = require('./durations.json');
} catch {
  /* no list: Jest's cache, else 5 s each */
}

class LongestFirst extends Sequencer {
  sort(tests) {
    const seconds = (test) => known[path.relative(root, test.path).split(path.sep).join('/')] ?? (this.time(test) ?? 5000) / 1000;
    return [...tests].sort((a, b) => seconds(b) - seconds(a) || (a.path < b.path ? -1 : 1));
  }
}

module.exports = LongestFirst;
