/**
 * The bench's floor (dev/bench/bare-workflow.ts) runs the shape it is given: activities and local
 * activities in order, side by side where the shape has them overlap. Checked by reading the bare
 * workflow's own recorded history back with the same reader that reads a turn's
 * (dev/bench/history-shape.ts), so this also proves that reader on the markers Temporal's SDK really
 * writes for local activities.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { BareActivities, BareWorkflow } from '../../dev/bench/bare-workflow';
import { activityShape, type BareStep } from '../../dev/bench/history-shape';
import { quietBundlerLogger } from '../../worker/create-worker';
import { createLocalTestEnvironment } from './support';

let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
const taskQueue = 'bench-bare';
const started: string[] = [];
const activities: BareActivities = {
  async noOp(step) {
    started.push(step);
    // Long enough that two steps started together are both still open when the first closes.
    await new Promise((resolve) => setTimeout(resolve, 50));
  },
};

beforeAll(async () => {
  let code: string;
  [env, { code }] = await Promise.all([
    createLocalTestEnvironment(),
    bundleWorkflowCode({ workflowsPath: require.resolve('../../dev/bench/bare-workflow'), logger: quietBundlerLogger }),
  ]);
  worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: { code }, activities });
  running = worker.run();
}, 60_000);

afterAll(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await env?.teardown();
});

async function runShape(workflowId: string, steps: BareStep[]) {
  started.length = 0;
  const handle = await env.client.workflow.start<typeof BareWorkflow>('BareWorkflow', {
    workflowId,
    taskQueue,
    args: [steps],
  });
  await handle.result();
  return activityShape((await handle.fetchHistory()).events ?? []);
}

test('a shape with local activities and two overlapping activities comes back from the bare history as given', async () => {
  const steps: BareStep[] = [
    { kind: 'local', type: 'startTurn', after: [] },
    { kind: 'activity', type: 'planAnalysis', after: [0] },
    { kind: 'activity', type: 'consultDomainExpert', after: [0] },
    { kind: 'local', type: 'finishDataScience', after: [0, 1, 2] },
    { kind: 'activity', type: 'synthesise', after: [0, 1, 2, 3] },
  ];
  const shape = await runShape('bench-bare-mixed', steps);
  // The two overlapping ones may be picked up in either order.
  expect([started[0], new Set(started.slice(1, 3)), ...started.slice(3)]).toEqual([
    'startTurn',
    new Set(['planAnalysis', 'consultDomainExpert']),
    'finishDataScience',
    'synthesise',
  ]);
  expect(shape.activities).toBe(3);
  expect(shape.localActivities).toBe(2);
  expect(shape.maxConcurrentActivities).toBe(2);
  // Every step of the floor is the one no-op, local or not: the marker's type is read from SDK core's JSON.
  expect(shape.steps).toEqual(steps.map((s) => ({ ...s, type: 'noOp' })));
});

test('a sequential shape runs one step at a time', async () => {
  const steps: BareStep[] = ['startTurn', 'route', 'completeTurn'].map((type, i) => ({
    kind: 'activity',
    type,
    after: Array.from({ length: i }, (_, j) => j),
  }));
  const shape = await runShape('bench-bare-sequential', steps);
  expect(shape.maxConcurrentActivities).toBe(1);
  expect(shape.steps).toEqual(steps.map((s) => ({ ...s, type: 'noOp' })));
});
