// Builds dist/amy.mjs: the CLI and everything it imports in one ESM file for Node, @amy/sdk taken
// from its source, so `amy` never depends on the SDK's own build. Run by the repository's postinstall.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
rmSync(path.join(root, 'dist'), { recursive: true, force: true });

await build({
  entryPoints: [path.join(root, 'src/main.ts')],
  outfile: path.join(root, 'dist/amy.mjs'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  alias: { '@amy/sdk': path.join(root, '../sdk/src/index.ts') },
  logLevel: 'warning',
});
