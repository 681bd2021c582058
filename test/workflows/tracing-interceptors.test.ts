/**
 * The workflow side of tracing (workflows/tracing-interceptors.ts), in the bundle every worker runs: a run
 * started with a trace context makes its spans (the run's and each activity's scheduling) and hands them
 * to the worker's sink; a run started without one makes none, and costs nothing for it.
 */
import { Client } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { BareActivities, BareWorkflow } from '../../dev/bench/bare-workflow';
import type { BareStep } from '../../dev/bench/history-shape';
import { WORKFLOW_TRACING_MODULES } from '../../platform/temporal/tracing';
import { quietBundlerLogger } from '../../worker/create-worker';
import { createLocalTestEnvironment } from './support';

let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
const taskQueue = 'tracing-interceptors';
/** The span names each workflow run exported through the sink, by workflow id. */
const exported = new Map<string, string[]>();
const activities: BareActivities = { noOp: async () => undefined };
const steps: BareStep[] = [
  { kind: 'activity', type: 'route', after: [] },
  { kind: 'local', type: 'completeTurn', after: [0] },
];

beforeAll(async () => {
  let code: string;
  [env, { code }] = await Promise.all([
    createLocalTestEnvironment(),
    bundleWorkflowCode({
      workflowsPath: require.resolve('../../dev/bench/bare-workflow'),
      workflowInterceptorModules: WORKFLOW_TRACING_MODULES,
      logger: quietBundlerLogger,
    }),
  ]);
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { code },
    activities,
    sinks: {
      exporter: {
        export: {
          fn: (info, spans: { name: string }[]) =>
            void exported.set(info.workflowId, [
              ...(exported.get(info.workflowId) ?? []),
              ...spans.map((span) => span.name),
            ]),
        },
      },
    },
  });
  running = worker.run();
}, 60_000);

afterAll(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await env?.teardown();
});

async function run(client: Client, workflowId: string) {
  await client.workflow.execute<typeof BareWorkflow>('BareWorkflow', { workflowId, taskQueue, args: [steps] });
  return exported.get(workflowId) ?? [];
}

test('a run started without a trace context makes no span', async () => {
  expect(await run(env.client, 'untraced')).toEqual([]);
});

test("a run started by a tracing client makes the run's span and one per activity it schedules", async () => {
  const tracing = new Client({
    connection: env.client.connection,
    interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
  });
  const names = await run(tracing, 'traced');
  expect(names).toEqual(expect.arrayContaining(['RunWorkflow:BareWorkflow', 'StartActivity:noOp']));
});
