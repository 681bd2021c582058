/**
 * docs/operations.md, "Database access": what the service runs reaches Postgres through `pg` only.
 * Prisma is the schema and migration tool, so no runtime module (nor a production command in
 * scripts/) may import its client or its driver adapter.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const RUNTIME_DIRS = ['api', 'worker', 'activities', 'platform', 'workflows', 'scripts'];
const PRISMA_IMPORT =
  /(?:from\s+|require\(\s*|import\(\s*)['"](?:[./]*generated\/prisma[^'"]*|@prisma\/client[^'"]*|@prisma\/adapter-pg)['"]/;

function typeScriptFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return typeScriptFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

test('no runtime module imports the Prisma client', () => {
  const files = RUNTIME_DIRS.flatMap((dir) => typeScriptFiles(path.join(ROOT, dir)));
  expect(files.length).toBeGreaterThan(50);
  const offenders = files
    .filter((file) => PRISMA_IMPORT.test(fs.readFileSync(file, 'utf8')))
    .map((file) => path.relative(ROOT, file));
  expect(offenders).toEqual([]);
});

test('the check recognises the ways the client can be imported', () => {
  for (const line of [
    "import { PrismaClient } from '../generated/prisma/client';",
    "import { Prisma } from '../../generated/prisma/client'",
    "const { PrismaClient } = require('@prisma/client');",
    "import { PrismaPg } from '@prisma/adapter-pg';",
    "await import('../generated/prisma/client')",
  ]) {
    expect(line).toMatch(PRISMA_IMPORT);
  }
  expect("import { Pool } from 'pg';").not.toMatch(PRISMA_IMPORT);
});
