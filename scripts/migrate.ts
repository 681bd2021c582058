import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../platform/project-root';

/** Applies pending migrations (`prisma migrate deploy`, offline through the JS schema engine). */
export function applyMigrations(databaseUrl: string) {
  execFileSync(path.join(PROJECT_ROOT, 'node_modules', '.bin', 'prisma'), ['migrate', 'deploy'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
