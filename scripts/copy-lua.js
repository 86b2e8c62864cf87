// Copies the library's Lua scripts next to its compiled code (libs/distributed-queue/dist/scripts): Lua is
// data, it ships in the package and the script loader reads it from there.
const { cpSync } = require('fs');
const { join } = require('path');
const lib = join(__dirname, '..', 'libs', 'distributed-queue');
cpSync(join(lib, 'src', 'scripts'), join(lib, 'dist', 'scripts'), {
  recursive: true,
  filter: (src) => !src.endsWith('.ts'),
});
