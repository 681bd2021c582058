/**
 * Shipping a workflow change while turns run (docs/operations.md#deploying), with Temporal Worker
 * Versioning on the dev server. Release v1 (today's workflow code) runs turns; release v2 brings
 * workflow code that no v1 turn could replay against (test/fixtures/next-release-workflows.ts: a timer
 * before the first step) and is promoted while v1's turns are mid-reply. Then:
 *
 * - every v1 turn finishes on v1 (each of its workflow tasks completed by a v1 worker), with a whole log;
 * - a turn started after the promotion runs v2's code (the timer is in its history);
 * - v1 drains: no open turn is pinned to it any more, Temporal says so, and its worker stops cleanly.
 *
 * Without versioning a v1 turn would have met v2's code: the test replays one against it to show the
 * change really is breaking.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import {
  countOpenPinnedWorkflows,
  describeDeployment,
  promoteVersion,
  type DeploymentVersion,
} from '../../platform/temporal/worker-deployments';
import { quietBundlerLogger } from '../../worker/create-worker';
import { api } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { openEventStream, type ReceivedEvent, type SseSession } from '../support/sse-client';
import { killHard, spawnWorkerProcess } from '../support/worker-process';

jest.setTimeout(240_000);

let svc: TestService;
let bundleDir: string;
let nextReleaseBundle: string;
let lock: PgClient | null = null;
const workers: ChildProcess[] = [];
const deploymentName = `amy-test-${Math.random().toString(36).slice(2, 8)}`;
const v1: DeploymentVersion = { deploymentName, buildId: 'v1' };
const v2: DeploymentVersion = { deploymentName, buildId: 'v2' };

beforeAll(async () => {
  // Paced deltas: a turn's reply takes seconds, so turns are mid-flight when v2 is promoted.
  svc = await startTestService({ scripted: { streamChunkDelayMs: 300 } });
  await svc.stopWorker(); // this suite's workers are real, versioned processes
  bundleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-next-release-'));
  nextReleaseBundle = path.join(bundleDir, 'workflows.js');
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../fixtures/next-release-workflows'),
    logger: quietBundlerLogger,
  });
  fs.writeFileSync(nextReleaseBundle, code);
});
afterAll(async () => {
  await lock?.end().catch(() => undefined);
  for (const worker of workers) await killHard(worker);
  await svc?.close();
  fs.rmSync(bundleDir, { recursive: true, force: true });
});

async function startRelease(version: DeploymentVersion, workflowBundlePath?: string) {
  const child = await spawnWorkerProcess(svc.config, {
    env: { AMY_DEPLOYMENT_NAME: version.deploymentName, AMY_BUILD_ID: version.buildId },
    ...(workflowBundlePath ? { workflowBundlePath } : {}),
  });
  workers.push(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited };
}

/** `npm run deploy:<command> -- <args>`, as an operator runs it. */
async function deployCommand(command: 'promote' | 'status', ...args: string[]) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', path.resolve(__dirname, '../../scripts/deploy.ts'), command, ...args],
    {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: svc.config.TEMPORAL_ADDRESS,
        TEMPORAL_NAMESPACE: svc.config.TEMPORAL_NAMESPACE,
        AMY_DEPLOYMENT_NAME: deploymentName,
      },
    },
  );
  return stdout;
}

async function startTurn(apiKey: string, content: string) {
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: apiKey,
    body: { messages: [{ role: 'user', content }] },
  });
  expect(created.status).toBe(201);
  const turnId = created.body.id as string;
  return { turnId, stream: openEventStream(`${svc.url}/v1/turns/${turnId}/events`, { apiKey }) };
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function expectWholeLog(events: ReceivedEvent[]) {
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  expect(events.filter((e) => e.type === 'turn.started')).toHaveLength(1);
  expect(events.filter((e) => e.type === 'turn.completed' || e.type === 'turn.failed')).toHaveLength(1);
  expect(events[events.length - 1].type).toBe('turn.completed');
  // Nothing was retried: a task that reached the wrong code would have failed and been retried.
  expect(events.filter((e) => e.type === 'step.retry')).toHaveLength(0);
}

/** Which build ids completed the turn's workflow tasks, whether it started a timer, and the version it is pinned to. */
async function runOf(turnId: string) {
  const handle = svc.temporal.workflow.getHandle(turnId);
  const history = await handle.fetchHistory();
  const tasksBy = new Set(
    (history.events ?? []).flatMap((e) => {
      const attrs = e.workflowTaskCompletedEventAttributes;
      return attrs ? [attrs.deploymentVersion?.buildId ?? 'unversioned'] : [];
    }),
  );
  const timers = (history.events ?? []).filter((e) => e.timerStartedEventAttributes).length;
  const described = await handle.describe();
  const pinnedTo = described.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId ?? null;
  return { history, tasksBy: [...tasksBy], timers, pinnedTo };
}

test('v2 with a breaking workflow change is promoted while v1 turns run: they finish on v1, new turns run v2, v1 drains and stops', async () => {
  // Release v1: today's workflow code, made current.
  const release1 = await startRelease(v1);
  expect((await promoteVersion(svc.temporal, v1, { identity: 'versioning test' })).previousBuildId).toBeNull();

  // Two turns start on v1; they are held mid-reply (their next event append waits on a lock of their
  // rows) so that they are sure to be running all through the promotion.
  const oldUser = await svc.createUser();
  const old: Array<{ turnId: string; stream: SseSession }> = [];
  for (const content of ['thanks a lot, that was very helpful!', 'thank you so much, see you tomorrow!']) {
    old.push(await startTurn(oldUser.apiKey, content));
  }
  for (const turn of old) await turn.stream.waitFor((e) => e.type === 'agent.thought' && e.data.agent === 'synthesis');
  lock = new PgClient({ connectionString: svc.database.url });
  await lock.connect();
  await lock.query('BEGIN');
  await lock.query('SELECT id FROM turns WHERE id = ANY($1) FOR UPDATE', [old.map((t) => t.turnId)]);

  // Release v2: the changed workflow code, deployed beside v1, then promoted.
  const release2 = await startRelease(v2, nextReleaseBundle);
  expect(await deployCommand('promote', 'v2')).toContain(`${deploymentName}.v2 is current (was ${deploymentName}.v1)`);
  const promoted = await describeDeployment(svc.temporal, deploymentName);
  expect(promoted?.currentBuildId).toBe('v2');
  expect(promoted?.versions.find((v) => v.buildId === 'v1')?.status).toBe('draining');

  // A turn started now runs v2's code, to the end.
  const newUser = await svc.createUser();
  const fresh = await startTurn(newUser.apiKey, 'thanks, that was really helpful!');
  await fresh.stream.closedByServer;
  expectWholeLog(fresh.stream.events);
  const freshRun = await runOf(fresh.turnId);
  expect(freshRun.pinnedTo).toBe('v2');
  expect(freshRun.tasksBy).toEqual(['v2']);
  expect(freshRun.timers).toBe(1);

  // The old turns go on, still on v1, and complete with whole logs.
  expect(old.every((turn) => turn.stream.events[turn.stream.events.length - 1].type !== 'turn.completed')).toBe(true);
  await lock.query('COMMIT');
  await lock.end();
  lock = null;
  for (const turn of old) {
    await turn.stream.closedByServer;
    expectWholeLog(turn.stream.events);
    const run = await runOf(turn.turnId);
    expect(run.pinnedTo).toBe('v1');
    expect(run.tasksBy).toEqual(['v1']);
    expect(run.timers).toBe(0);
  }
  // What versioning spared them: v2's code cannot replay a v1 turn.
  await expect(
    Worker.runReplayHistory(
      { workflowBundle: { codePath: nextReleaseBundle }, dataConverter: svc.dataConverter },
      (await runOf(old[0].turnId)).history,
      old[0].turnId,
    ),
  ).rejects.toBeInstanceOf(DeterminismViolationError);

  // v1 drains: no open turn is pinned to it, Temporal marks it drained, and its worker stops cleanly.
  await until(async () => (await countOpenPinnedWorkflows(svc.temporal, v1)) === 0, 'no turn is pinned to v1');
  await until(
    async () =>
      (await describeDeployment(svc.temporal, deploymentName))?.versions.find((v) => v.buildId === 'v1')?.status ===
      'drained',
    'Temporal reports v1 drained',
  );
  const status = await deployCommand('status');
  expect(status).toContain(`deployment ${deploymentName}: current v2, ramping none`);
  expect(status).toContain('v1  drained  open workflows pinned: 0');
  release1.child.kill('SIGTERM');
  expect(await release1.exited).toEqual({ code: 0, signal: null });

  // v2 alone serves what comes next.
  const after = await startTurn(newUser.apiKey, 'thank you, that was great!');
  await after.stream.closedByServer;
  expectWholeLog(after.stream.events);
  expect((await runOf(after.turnId)).tasksBy).toEqual(['v2']);
  release2.child.kill('SIGTERM');
  expect(await release2.exited).toEqual({ code: 0, signal: null });
});

test('a turn waiting for its user’s answer when v2 is promoted resumes on v1, the version it started on', async () => {
  const name = `amy-test-ask-${Math.random().toString(36).slice(2, 8)}`;
  const first: DeploymentVersion = { deploymentName: name, buildId: 'v1' };
  const next: DeploymentVersion = { deploymentName: name, buildId: 'v2' };
  const release1 = await startRelease(first);
  await promoteVersion(svc.temporal, first, { identity: 'versioning test' });

  const user = await svc.createUser();
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: {
      messages: [{ role: 'user', content: 'Is there anything in my numbers worth knowing?' }],
      interaction: { accepts: ['confirmation'], timeout_seconds: 600 },
    },
  });
  expect(created.status).toBe(201);
  const turnId = created.body.id as string;
  const stream = openEventStream(`${svc.url}/v1/turns/${turnId}/events`, { apiKey: user.apiKey });
  const asked = await stream.waitFor((e) => e.type === 'turn.input_required');

  // While it waits, v2's breaking workflow code is deployed and promoted.
  const release2 = await startRelease(next, nextReleaseBundle);
  await promoteVersion(svc.temporal, next, { identity: 'versioning test' });
  expect((await describeDeployment(svc.temporal, name))?.currentBuildId).toBe('v2');

  const answered = await api(svc.url, 'POST', `/v1/turns/${turnId}/input`, {
    key: user.apiKey,
    body: { request_id: asked.data.request_id, option_id: 'scan' },
  });
  expect(answered.status).toBe(200);
  await stream.closedByServer;
  expectWholeLog(stream.events);
  const run = await runOf(turnId);
  expect(run.pinnedTo).toBe('v1');
  expect(run.tasksBy).toEqual(['v1']);
  // Its wait is its own timer, not v2's: v2's code never ran it.
  expect(run.timers).toBe(1);

  for (const release of [release1, release2]) {
    release.child.kill('SIGTERM');
    expect(await release.exited).toEqual({ code: 0, signal: null });
  }
});
