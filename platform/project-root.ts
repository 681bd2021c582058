/**
 * The project's root directory: the one holding package.json, next to gates-py/, console/, sdk/dist/,
 * node_modules/ and .venv/. Files that are not code are found from here, not relative to a module's own
 * `__dirname`, because a module runs from two depths: as TypeScript (`platform/gates/index.ts`, under tsx) and
 * compiled (`dist/platform/gates/index.js`, `npm run build`). dist/ holds no package.json, so the nearest
 * ancestor with one is the root from both.
 */
import fs from 'node:fs';
import path from 'node:path';

function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}: the project's files are missing`);
  }
}

export const PROJECT_ROOT = findProjectRoot(__dirname);
