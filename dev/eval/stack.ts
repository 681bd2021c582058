/**
 * The service an eval run asks, wired as `npm start` wires it but in this process: a scripted model
 * server with the given rules, a Temporal worker on a task queue of its own, and the API. Several stacks
 * can share one Postgres and one Temporal server (the wrong-number case runs on a second one), each with
 * its own model, queue and API.
 */
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../../platform/config';
import { startApiServer } from '../../api/server';
import type { Logger } from '../../platform/logger';
import { startScriptedModelServer } from '../scripted-model/server';
import type { ScriptedRule } from '../scripted-model/types';
import { createTurnWorker } from '../../worker/create-worker';
import { createStepDeps } from '../../worker/dependencies';

export interface EvalStack {
  apiUrl: string;
  close(): Promise<void>;
}

const quietLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export async function startEvalStack(opts: {
  databaseUrl: string;
  temporalAddress: string;
  /** bundleWorkflowCode output, shared by every stack of the run. */
  workflowBundleCode: string;
  rules: ScriptedRule[];
  name: string;
}): Promise<EvalStack> {
  const closers: Array<() => Promise<void>> = [];
  let closing: Promise<void> | undefined;
  // Closed once, however many times asked: the run closes a stack when done with it and again on the way out.
  const close = () =>
    (closing ??= (async () => {
      for (const stop of closers.reverse()) await stop().catch((err) => console.error('[eval] stop failed:', err));
    })());
  try {
    const scripted = await startScriptedModelServer({ port: 0, rules: opts.rules });
    closers.push(() => scripted.close());
    const config = loadConfig({
      DATABASE_URL: opts.databaseUrl,
      TEMPORAL_ADDRESS: opts.temporalAddress,
      TEMPORAL_TASK_QUEUE: `amy-eval-${opts.name}-${Date.now().toString(36)}`,
      ANTHROPIC_BASE_URL: scripted.url,
      PORT: '0',
      LOG_LEVEL: 'error',
    });
    const deps = createStepDeps(config);
    closers.push(() => deps.close());
    const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
    closers.push(() => connection.close());
    const worker = await createTurnWorker({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      deps,
      dataConverter: deps.dataConverter,
      workflowBundle: { code: opts.workflowBundleCode },
    });
    const running = worker.run();
    closers.push(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });
    const api = await startApiServer(config, quietLogger);
    closers.push(() => api.close());
    return { apiUrl: api.url, close };
  } catch (err) {
    await close();
    throw err;
  }
}
