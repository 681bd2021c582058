/**
 * The bare workflow's worker (dev/bench/bare-workflow.ts) as a process of its own, for `npm run bench`'s
 * (g): the floor's CPU is counted per process, like the turn's, so the worker that runs the floor must
 * not share a process with anything else. Run as a child (`node --import tsx dev/bench/bare-worker-process.ts`)
 * with TEMPORAL_ADDRESS, BARE_TASK_QUEUE and BARE_WORKFLOW_BUNDLE_PATH (the bundle built once by the
 * bench); SDK defaults otherwise. Prints `bare worker polling` once it polls; SIGTERM stops it.
 */
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { BareActivities } from './bare-workflow';

const activities: BareActivities = { noOp: async () => undefined };

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: required('TEMPORAL_ADDRESS') });
  const worker = await Worker.create({
    connection,
    taskQueue: required('BARE_TASK_QUEUE'),
    activities,
    workflowBundle: { codePath: required('BARE_WORKFLOW_BUNDLE_PATH') },
  });
  console.log('bare worker polling');
  // The Runtime's default shutdown signals (SIGINT, SIGTERM) stop the worker; run() then resolves.
  await worker.run();
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
