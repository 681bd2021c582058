/**
 * The whole service for `npm run bench:pacing`, as `npm run load -- --pace realistic` runs it: a throwaway
 * Postgres and headless Temporal dev server (or DATABASE_URL / TEMPORAL_ADDRESS), the scripted model paced
 * like Claude in a process of its own, one worker and one API process as `npm start` runs them. Each turn
 * gets a new user with the demo's health data, so no turn's memory (what earlier turns remembered, which
 * every model call reads, and which the Investigator uses to skip what was already tested) shapes another's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import { Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { createUserWithApiKey } from '../../platform/users';
import { useEphemeralMasterKey } from '../stack/dev-keys';
import { seedDemoHealthData } from '../synthetic-data/demo-user';
import { realisticPacing, type Pacing } from '../scripted-model/pacing';
import { quietBundlerLogger, turnWorkflowBundleOptions } from '../../worker/create-worker';
import { startApiProcess, stopApiProcesses } from './api-process';
import { startInfrastructure } from './infrastructure';
import { startModelProcess, startWorkerProcess, stopRoleProcesses } from './load-processes';

export interface PacedStack {
  apiUrl: string;
  /** For the `llm_calls` ledger. */
  pool: Pool;
  pacing: Pacing;
  postgresVersion: string;
  temporalVersion: string;
  /** A new user with the demo's health data; returns its API key. */
  newDemoUser(): Promise<string>;
  stop(): Promise<void>;
}

export async function startPacedStack(say: (message: string) => void): Promise<PacedStack> {
  const stoppers: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const step of stoppers.reverse()) await step().catch((err) => console.error('[bench:pacing] stop:', err));
  };
  // Payloads are encrypted under a master key; the servers are thrown away with the run, and so is the key.
  useEphemeralMasterKey();
  try {
    say('starting Postgres and Temporal');
    const infra = await startInfrastructure();
    stoppers.push(() => infra.stop());

    say('bundling the turn workflow');
    // As worker/bundle-workflows.ts builds it, so the worker starts without bundling it again.
    const bundle = await bundleWorkflowCode({ ...turnWorkflowBundleOptions, logger: quietBundlerLogger });
    const bundleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-pacing-bundle-'));
    stoppers.push(async () => fs.rmSync(bundleDir, { recursive: true, force: true }));
    const bundlePath = path.join(bundleDir, 'workflow-bundle.js');
    fs.writeFileSync(bundlePath, bundle.code);

    // No overrides: the targets are stated under the default realistic pacing.
    const pacing = realisticPacing({});
    say('starting the scripted model (realistic pacing), a worker and the API');
    const model = await startModelProcess(0, {});
    stoppers.push(() => model.stop());
    // A task queue of our own, in case TEMPORAL_ADDRESS is a shared server.
    const taskQueue = `amy-pacing-${Date.now().toString(36)}`;
    const env = { DATABASE_URL: infra.databaseUrl, TEMPORAL_ADDRESS: infra.temporalAddress };
    stoppers.push(stopRoleProcesses);
    await startWorkerProcess({
      ...env,
      TEMPORAL_TASK_QUEUE: taskQueue,
      ANTHROPIC_BASE_URL: model.url,
      WORKFLOW_BUNDLE_PATH: bundlePath,
    });
    stoppers.push(stopApiProcesses);
    const api = await startApiProcess({ ...env, TEMPORAL_TASK_QUEUE: taskQueue });

    const pool = new Pool({ connectionString: infra.databaseUrl, max: 2 });
    stoppers.push(() => pool.end());
    const connection = await Connection.connect({ address: infra.temporalAddress });
    const temporalVersion = (await connection.workflowService.getSystemInfo({})).serverVersion || 'unknown';
    await connection.close();

    const suffix = Date.now().toString(36);
    let users = 0;
    return {
      apiUrl: api.url,
      pool,
      pacing,
      postgresVersion: infra.postgresVersion + (process.env.DATABASE_URL ? ' (DATABASE_URL)' : ''),
      temporalVersion:
        `server ${temporalVersion}` +
        (process.env.TEMPORAL_ADDRESS ? ' (TEMPORAL_ADDRESS)' : ', dev server, in memory'),
      async newDemoUser() {
        const { user, apiKey } = await createUserWithApiKey(pool, `pacing_${suffix}_${++users}`);
        await seedDemoHealthData(pool, user.id);
        return apiKey;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
