// Preload (node --require): makes pg unresolvable in this process, as if it were not installed, and records
// every attempt to load it (globalThis.__dqPgRequests), so a caught require shows too.
const Module = require('module');
const resolve = Module._resolveFilename;
globalThis.__dqPgRequests = [];
Module._resolveFilename = function (request, ...rest) {
  if (request === 'pg' || request.startsWith('pg/')) {
    globalThis.__dqPgRequests.push(request);
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
