// Copies the Lua scripts next to the compiled library: Lua is data and must reach dist/.
const { cpSync } = require('fs');
const { join } = require('path');
const root = join(__dirname, '..');
cpSync(join(root, 'libs/distributed-queue/src/scripts'), join(root, 'dist/libs/distributed-queue/src/scripts'), {
  recursive: true,
  filter: (src) => !src.endsWith('.ts'),
});
