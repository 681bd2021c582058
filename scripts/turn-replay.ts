/**
 * `npm run turn:replay -- <turn_id>`: replays a turn's workflow history, fetched from Temporal, against
 * the current workflow code, to tell before a deploy whether a change would break that turn.
 * Exit 0: it replays; 1: it diverges (the determinism error is printed); 2: no such turn in Temporal.
 */
import { Pool } from 'pg';
import { createDataKeyStore } from '../platform/crypto/data-keys';
import { loadMasterKeyring } from '../platform/crypto/master-key';
import { createDataConverter } from '../platform/temporal/data-converter';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { loadConfig } from '../platform/config';
import { workflowTracingSinks } from '../platform/temporal/tracing';
import { workflowInterceptorModules, workflowsPath } from '../worker/create-worker';
import { CliError, failCommand, masterKeyEnv, resolveDatabaseUrl } from './cli-env';

const USAGE = 'usage: npm run turn:replay -- <turn_id>';

const EXIT_DIVERGES = 1;
const EXIT_UNKNOWN_TURN = 2;

async function run() {
  const args = process.argv.slice(2);
  if (args.length !== 1 || args[0].startsWith('-')) throw new CliError(USAGE);
  const [turnId] = args;
  // The history's payloads are encrypted: their data keys are in Postgres, under the master key.
  const config = loadConfig({ ...process.env, DATABASE_URL: resolveDatabaseUrl() });
  const pool = new Pool({ connectionString: config.DATABASE_URL, max: 2 });
  const dataConverter = createDataConverter(pool, createDataKeyStore(pool, loadMasterKeyring(masterKeyEnv())));
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  let history;
  try {
    const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter });
    // The turn workflow's id is the turn id. describe() first: it reports an unknown id as
    // WorkflowNotFoundError, where fetchHistory() throws a raw gRPC NOT_FOUND.
    const handle = client.workflow.getHandle(turnId);
    await handle.describe();
    history = await handle.fetchHistory();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    console.error(
      `error: no turn ${turnId} in Temporal namespace ${config.TEMPORAL_NAMESPACE} at ${config.TEMPORAL_ADDRESS}`,
    );
    process.exitCode = EXIT_UNKNOWN_TURN;
    await pool.end();
    return;
  } finally {
    await connection.close();
  }
  const workflowCode = config.WORKFLOW_BUNDLE_PATH
    ? { workflowBundle: { codePath: config.WORKFLOW_BUNDLE_PATH } }
    : { workflowsPath, interceptors: { workflowModules: workflowInterceptorModules } };
  // The replay worker's lifecycle and bundling chatter would bury the verdict; warnings still show.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  try {
    await Worker.runReplayHistory({ ...workflowCode, dataConverter, sinks: workflowTracingSinks() }, history, turnId);
  } catch (err) {
    if (!(err instanceof DeterminismViolationError)) throw err;
    console.log(`turn ${turnId} does NOT replay against the current workflow code:\n${err.message}`);
    process.exitCode = EXIT_DIVERGES;
    return;
  } finally {
    await pool.end();
  }
  console.log(`OK: turn ${turnId} replays against the current workflow code (${history.events?.length ?? 0} events)`);
}

run().catch((err) => failCommand(err));
