// Copies the library's non-TypeScript files next to its compiled code, where the code reads them at run time:
//  - the Lua scripts (libs/distributed-queue/dist/scripts): Lua is data, the script loader reads it from there;
//  - the dashboard's bundled front end (dist/dashboard/assets: app.js, app.css, built by build-dashboard.js).
const { cpSync } = require('fs');
const { join } = require('path');
const lib = join(__dirname, '..', 'libs', 'distributed-queue');
cpSync(join(lib, 'src', 'scripts'), join(lib, 'dist', 'scripts'), {
  recursive: true,
  filter: (src) => !src.endsWith('.ts'),
});
cpSync(join(lib, 'src', 'dashboard', 'assets'), join(lib, 'dist', 'dashboard', 'assets'), { recursive: true });
