/**
 * Starts the real infrastructure once per jest run: a Postgres cluster (unless DATABASE_URL is set)
 * holding a migrated template database, and a Temporal dev server (unless TEMPORAL_ADDRESS is set); and
 * builds the service (`npm run build`), whose compiled roles the suites run.
 * Each suite clones the template into a database of its own (see ./database.ts).
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { startLocalServices } from '../../dev/stack/local-services';
import { applyMigrations } from '../../scripts/migrate';
import { buildCompiledRoles, COMPILED_WORKFLOW_BUNDLE } from './compiled-roles';
import { TEMPLATE_DB, TEST_ENV_VAR, type TestEnv } from './test-env';

export default async function globalSetup() {
  const stoppers: Array<() => Promise<void>> = [];
  (globalThis as { __amyStoppers?: typeof stoppers }).__amyStoppers = stoppers;
  // Built while the servers start; a failed build fails the setup once they have been stopped.
  const build = buildCompiledRoles().then(
    () => null,
    (err: unknown) => err,
  );
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

    // The service under test is the compiled build (./compiled-roles.ts), made once per run while the
    // servers start; its workflow bundle is also the one every suite's in-process worker loads.
    const buildError = await build;
    if (buildError) throw buildError;

    const env: TestEnv = {
      adminUrl,
      temporalAddress: services.temporalAddress,
      workflowBundlePath: COMPILED_WORKFLOW_BUNDLE,
    };
    process.env[TEST_ENV_VAR] = JSON.stringify(env);
    // One master key for the run's processes (jest workers and the children they start inherit it).
    process.env.AMY_MASTER_KEY ??= randomBytes(32).toString('base64');
  } catch (err) {
    // Jest skips the global teardown when the setup fails: stop what did start.
    for (const stop of stoppers.reverse()) await stop();
    throw err;
  }
}
