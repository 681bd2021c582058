/**
 * Starts the real infrastructure once per jest run: a Postgres cluster (unless DATABASE_URL is set)
 * holding a migrated template database, and a Temporal dev server (unless TEMPORAL_ADDRESS is set).
 * Each suite clones the template into a database of its own (see ./database.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { bundleWorkflowCode } from '@temporalio/worker';
import { startLocalPostgres } from '../../scripts/local-postgres';
import { startLocalTemporal } from '../../scripts/local-temporal';
import { applyMigrations } from '../../scripts/migrate';
import { quietBundlerLogger, workflowsPath } from '../../worker/create-worker';
import { TEMPLATE_DB, TEST_ENV_VAR, type TestEnv } from './test-env';

export default async function globalSetup() {
  const stoppers: Array<() => Promise<void>> = [];
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-test-pg-'));
    fs.chmodSync(dataDir, 0o755);
    const pg = await startLocalPostgres({ dataDir: path.join(dataDir, 'pg'), database: 'postgres' });
    stoppers.push(async () => {
      await pg.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    adminUrl = pg.url;
  }
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB}`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  await admin.end();
  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${TEMPLATE_DB}`;
  applyMigrations(templateUrl.toString());

  let temporalAddress = process.env.TEMPORAL_ADDRESS;
  if (!temporalAddress) {
    const temporal = await startLocalTemporal({ headless: true });
    stoppers.push(() => temporal.stop());
    temporalAddress = temporal.address;
  }

  // Bundling workflow code takes seconds; do it once and let every suite's workers reuse it.
  const bundleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-test-bundle-'));
  const workflowBundlePath = path.join(bundleDir, 'workflows.js');
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: quietBundlerLogger });
  fs.writeFileSync(workflowBundlePath, code);
  stoppers.push(async () => fs.rmSync(bundleDir, { recursive: true, force: true }));

  const env: TestEnv = { adminUrl, temporalAddress, workflowBundlePath };
  process.env[TEST_ENV_VAR] = JSON.stringify(env);
  (globalThis as { __amyStoppers?: typeof stoppers }).__amyStoppers = stoppers;
}
