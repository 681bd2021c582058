// Builds dist/: one ESM bundle that runs in Node, browsers, Deno and Bun (no Node built-ins, no
// import of anything: its one runtime dependency is bundled), and one declaration file. Run by the
// repository's postinstall.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
rmSync(path.join(root, 'dist'), { recursive: true, force: true });

const result = await build({
  entryPoints: [path.join(root, 'src/index.ts')],
  outfile: path.join(root, 'dist/index.js'),
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  // standardwebhooks and its dependencies are CommonJS packages with a `main` only.
  mainFields: ['module', 'main'],
  target: 'es2022',
  sourcemap: true,
  metafile: true,
  logLevel: 'warning',
});
// The contracts are shared with the server, which validates with zod; the SDK only takes their
// types. A value import of a zod module would drag the schema library into every client. The one
// dependency bundled is `standardwebhooks` (verifyWebhook), with the two small runtime-neutral
// packages it uses, so the bundle still imports nothing.
const BUNDLED = ['node_modules/standardwebhooks/', 'node_modules/@stablelib/base64/', 'node_modules/fast-sha256/'];
const foreign = Object.keys(result.metafile.inputs).filter(
  (input) => input.includes('node_modules') && !BUNDLED.some((allowed) => input.includes(allowed)),
);
if (foreign.length > 0) {
  console.error(`@amy/sdk must bundle no dependency but standardwebhooks, and it imports: ${foreign.join(', ')}`);
  process.exit(1);
}

// One declaration file, its contract types inlined: a consumer on any module resolution (NodeNext
// included, which wants extensions on relative imports) resolves it without the repository around it.
execFileSync(
  process.execPath,
  [
    path.join(root, '../node_modules/dts-bundle-generator/dist/bin/dts-bundle-generator.js'),
    '--project',
    'tsconfig.json',
    '--no-banner',
    '--silent',
    '-o',
    'dist/index.d.ts',
    'src/index.ts',
  ],
  { cwd: root, stdio: 'inherit' },
);
