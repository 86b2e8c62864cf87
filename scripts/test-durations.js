#!/usr/bin/env node
/**
 * Writes test/support/durations.json (each test file's duration in seconds, rounded) from the JSON report of
 * a full run, for test/support/sequencer.js: `npx jest --config jest.config.js --json --outputFile=run.json`,
 * then `node scripts/test-durations.js run.json`. Files under a second are left out (they go last).
 */
'use strict';
const fs = require('fs');
const path = require('path');

const report = process.argv[2];
if (!report) {
  console.error('usage: node scripts/test-durations.js <jest --json report>');
  process.exit(2);
}
const root = path.resolve(__dirname, '..');
const { testResults } = JSON.parse(fs.readFileSync(report, 'utf8'));
const durations = {};
for (const result of testResults.sort((a, b) => b.endTime - b.startTime - (a.endTime - a.startTime))) {
  const seconds = Math.round((result.endTime - result.startTime) / 1000);
  if (seconds >= 1) durations[path.relative(root, result.name).split(path.sep).join('/')] = seconds;
}
fs.writeFileSync(path.join(root, 'test', 'support', 'durations.json'), JSON.stringify(durations, null, 1) + '\n');
console.log(`${Object.keys(durations).length} files written to test/support/durations.json`);
