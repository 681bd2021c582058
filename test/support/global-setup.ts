/**
 * Starts the real infrastructure once per jest run: a Postgres cluster (unless DATABASE_URL is set)
 * holding a migrated template database, and a Temporal dev server (unless TEMPORAL_ADDRESS is set).
 * Each suite clones the template into a database of its own (see ./database.ts).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { bundleWorkflowCode } from '@temporalio/worker';
import { startLocalServices } from '../../dev/stack/local-services';
import { applyMigrations } from '../../scripts/migrate';
import { quietBundlerLogger, workflowInterceptorModules, workflowsPath } from '../../worker/create-worker';
import { TEMPLATE_DB, TEST_ENV_VAR, type TestEnv } from './test-env';

export default async function globalSetup() {
  const stoppers: Array<() => Promise<void>> = [];
  (globalThis as { __amyStoppers?: typeof stoppers }).__amyStoppers = stoppers;
  try {
    const services = await startLocalServices({
      postgres: { tempDirPrefix: 'amy-test-pg-', database: 'postgres' },
      temporal: {
        headless: true,
        // A worker version with no open turn pinned to it is reported drained within seconds, not the
        // server's minutes (test/faults/worker-versioning.test.ts waits for it).
        dynamicConfig: {
          'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '2s',
          'matching.wv.VersionDrainageStatusRefreshInterval': '1s',
        },
      },
    });
    stoppers.push(() => services.stop());
    const adminUrl = services.databaseUrl;
    const admin = new Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB}`);
    await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
    await admin.end();
    const templateUrl = new URL(adminUrl);
    templateUrl.pathname = `/${TEMPLATE_DB}`;
    applyMigrations(templateUrl.toString());

    // Bundling workflow code takes seconds; do it once and let every suite's workers reuse it.
    const bundleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-test-bundle-'));
    stoppers.push(async () => fs.rmSync(bundleDir, { recursive: true, force: true }));
    const workflowBundlePath = path.join(bundleDir, 'workflows.js');
    const { code } = await bundleWorkflowCode({
      workflowsPath,
      workflowInterceptorModules,
      logger: quietBundlerLogger,
    });
    fs.writeFileSync(workflowBundlePath, code);

    const env: TestEnv = { adminUrl, temporalAddress: services.temporalAddress, workflowBundlePath };
    process.env[TEST_ENV_VAR] = JSON.stringify(env);
    // One master key for the run's processes (jest workers and the children they start inherit it).
    process.env.AMY_MASTER_KEY ??= randomBytes(32).toString('base64');
  } catch (err) {
    // Jest skips the global teardown when the setup fails: stop what did start.
    for (const stop of stoppers.reverse()) await stop();
    throw err;
  }
}
