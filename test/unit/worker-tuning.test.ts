/**
 * The worker's capacity from the environment (worker/worker-tuning.ts): activity slots default to 1000,
 * above the SDK's 100 that held turns waiting in Temporal's queue; the other options are the SDK's unless
 * set, and each variable reaches its option.
 */
import { loadConfig } from '../../platform/config';
import { workerTuning } from '../../worker/worker-tuning';

const base = { DATABASE_URL: 'postgresql://amy@127.0.0.1:5432/amy' };

test('by default: 1000 activity slots, everything else left to the SDK', () => {
  expect(workerTuning(loadConfig(base))).toEqual({ maxConcurrentActivityTaskExecutions: 1000 });
  expect(loadConfig(base).AMY_PG_POOL_SIZE).toBe(20);
});

test('each variable reaches its worker option', () => {
  const config = loadConfig({
    ...base,
    AMY_WORKER_MAX_ACTIVITIES: '3000',
    AMY_WORKER_MAX_LOCAL_ACTIVITIES: '200',
    AMY_WORKER_MAX_WORKFLOW_TASKS: '80',
    AMY_WORKER_MAX_CACHED_WORKFLOWS: '5000',
    AMY_WORKER_ACTIVITY_POLLERS: '20',
    AMY_WORKER_WORKFLOW_POLLERS: '12',
    AMY_PG_POOL_SIZE: '50',
  });
  expect(workerTuning(config)).toEqual({
    maxConcurrentActivityTaskExecutions: 3000,
    maxConcurrentLocalActivityExecutions: 200,
    maxConcurrentWorkflowTaskExecutions: 80,
    maxCachedWorkflows: 5000,
    activityTaskPollerBehavior: { type: 'simple-maximum', maximum: 20 },
    workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 12 },
  });
  expect(config.AMY_PG_POOL_SIZE).toBe(50);
});

test('a value out of range is refused at start-up', () => {
  expect(() => loadConfig({ ...base, AMY_WORKER_MAX_ACTIVITIES: '0' })).toThrow(/AMY_WORKER_MAX_ACTIVITIES/);
  expect(() => loadConfig({ ...base, AMY_WORKER_WORKFLOW_POLLERS: '1' })).toThrow(/AMY_WORKER_WORKFLOW_POLLERS/);
});
