import { execFileSync } from 'node:child_process';
import path from 'node:path';

const projectRoot = path.resolve(__dirname, '..');

/** Applies pending migrations (`prisma migrate deploy`, offline through the JS schema engine). */
export function applyMigrations(databaseUrl: string) {
  execFileSync(path.join(projectRoot, 'node_modules', '.bin', 'prisma'), ['migrate', 'deploy'], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
