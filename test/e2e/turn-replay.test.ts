/** `npm run turn:replay`, run as a real child process against the test Temporal server. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { quietBundlerLogger } from '../../worker/create-worker';
import { api, thanks } from '../support/http';
import { runCli } from '../support/cli';
import { startTestService, type TestService } from '../support/service';
import { readTestEnv } from '../support/test-env';

let svc: TestService;
let env: Record<string, string>;

beforeAll(async () => {
  svc = await startTestService();
  env = {
    TEMPORAL_ADDRESS: svc.config.TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE: svc.config.TEMPORAL_NAMESPACE,
    DATABASE_URL: svc.config.DATABASE_URL,
    // The bundle the global setup built from the current workflow code; saves bundling again.
    WORKFLOW_BUNDLE_PATH: readTestEnv().workflowBundlePath,
  };
});
afterAll(async () => {
  await svc?.close();
});

test('a completed turn replays against the current workflow code: exit 0', async () => {
  const { apiKey } = await svc.createUser();
  const res = await api(svc.url, 'POST', '/v1/turns', { key: apiKey, body: { ...thanks, stream: false } });
  expect(res.body.status).toBe('completed');

  const result = await runCli('scripts/turn-replay.ts', [res.body.id], env);
  expect(result).toMatchObject({ code: 0 });
  expect(result.stdout).toContain(`OK: turn ${res.body.id} replays`);
}, 60_000);

test('a turn that the changed workflow code cannot replay: the divergence and exit 1', async () => {
  const { apiKey } = await svc.createUser();
  const res = await api(svc.url, 'POST', '/v1/turns', { key: apiKey, body: { ...thanks, stream: false } });
  expect(res.body.status).toBe('completed');
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../fixtures/diverging-workflow'),
    logger: quietBundlerLogger,
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-diverging-'));
  const bundle = path.join(dir, 'workflows.js');
  fs.writeFileSync(bundle, code);
  try {
    const result = await runCli('scripts/turn-replay.ts', [res.body.id], { ...env, WORKFLOW_BUNDLE_PATH: bundle });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`turn ${res.body.id} does NOT replay against the current workflow code`);
    // The determinism error names what the code did differently.
    expect(result.stdout).toMatch(/route|startTurn|[Nn]ondetermin/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);

test('an unknown turn id: a clear message and exit 2', async () => {
  const result = await runCli('scripts/turn-replay.ts', ['turn_01JUNKNOWNUNKNOWNUNKNOWNXX'], env);
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('no turn turn_01JUNKNOWNUNKNOWNUNKNOWNXX');
}, 60_000);

test('no turn id: usage and exit 1', async () => {
  const result = await runCli('scripts/turn-replay.ts', [], env);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('usage: npm run turn:replay -- <turn_id>');
}, 60_000);
