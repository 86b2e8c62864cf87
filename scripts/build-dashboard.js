// Bundles the dashboard's front end (libs/distributed-queue/dashboard-ui: Preact + htm) into one minified ES
// module and one stylesheet, libs/distributed-queue/src/dashboard/assets/app.js and app.css. The bundle is
// committed: the package ships it and the page loads nothing else. dashboard-assets.spec.ts rebuilds it in
// memory (buildDashboard({ write: false })) and fails when the committed files differ.
const esbuild = require('esbuild');
const { join, relative } = require('path');

const lib = join(__dirname, '..', 'libs', 'distributed-queue');
const entry = join(lib, 'dashboard-ui', 'main.js');
const outdir = join(lib, 'src', 'dashboard', 'assets');

/**
 * Builds the bundle; with `write: false` nothing is written and the files are returned.
 * @returns {Promise<{ path: string, text: string }[]>} app.js and app.css, absolute paths
 */
async function buildDashboard({ write = true } = {}) {
  const result = await esbuild.build({
    entryPoints: [entry],
    entryNames: 'app',
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    sourcemap: false,
    logLevel: 'silent',
    write,
  });
  if (write) return [];
  return result.outputFiles.map((f) => ({ path: f.path, text: f.path.endsWith('.js') ? oneLine(f.text) : f.text }));
}

/**
 * The minified script on one line: the only line breaks esbuild leaves are inside template literals (htm's
 * templates), where the escape `\n` has the same (cooked) value; the file then reads as one generated line.
 */
function oneLine(js) {
  return `${js.trimEnd().replace(/\r?\n/g, '\\n')}\n`;
}

module.exports = { buildDashboard, outdir };

if (require.main === module) {
  buildDashboard({ write: false })
    .then((files) => {
      const { mkdirSync, writeFileSync } = require('fs');
      mkdirSync(outdir, { recursive: true });
      for (const f of files) {
        writeFileSync(f.path, f.text);
        console.log(`${relative(process.cwd(), f.path)}  ${(Buffer.byteLength(f.text) / 1024).toFixed(1)} kB`);
      }
    })
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
}
