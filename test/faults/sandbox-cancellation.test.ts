/**
 * Cancellation and timeouts reach the sandbox, through whole turns: a real worker (in this process, then
 * as a process of its own), real Temporal, real bubblewrap. The worker runs one sandbox at a time
 * (AMY_SANDBOX_CONCURRENCY=1), so a turn's analysis queues behind another's, as it does on a busy worker.
 *
 * - A turn cancelled while its analysis waits behind a slow run: its code never runs, not even its
 *   syntax check, though the queue it waited in goes on.
 * - An attempt that times out (the worker stalls past the heartbeat timeout): when the retry comes, the
 *   timed-out attempt's run is killed rather than left to run out its wall clock with the retry queued
 *   behind it.
 *
 * - A worker stopped (SIGTERM, a deploy) during a run that outlasts its grace: the run is killed, the
 *   worker exits 0 once it is gone, and the step runs again on another worker.
 *
 * Which code ran is read from the run directories themselves (each run's input/code.py, in the
 * worker's AMY_SANDBOX_DIR), which every run has for as long as it runs.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { turnSchema, type Turn } from '../../contracts/turn';
import { defaultRules } from '../../dev/scripted-model/rules';
import type { ScriptedRule } from '../../dev/scripted-model/types';
import { RUN_DIR_PREFIX } from '../../platform/sandbox/run-dir';
import { api, expectSchema } from '../support/http';
import { sandboxProcessesOf } from '../support/sandbox-processes';
import { startDemoService, type DemoService, type TestService } from '../support/service';
import { openEventStream } from '../support/sse-client';
import { killHard, spawnWorkerProcess } from '../support/worker-process';

jest.setTimeout(300_000);

const DS_MEAN = 'What is my average resting heart rate over the last 90 days?';

/**
 * The code step, switchable by the test: the next request's code first sleeps `sleep` seconds and
 * carries `marker` (a comment), so its runs can be told apart; every other request gets the default.
 */
let nextCode: { marker: string; sleep: number } | null = null;
const writeCode = defaultRules.find((rule) => rule.step === 'ds_code')!;
const markedCode: ScriptedRule = {
  step: 'ds_code',
  respond(req) {
    const mark = nextCode;
    nextCode = null;
    const answer = writeCode.respond(req);
    if (!mark || !('text' in answer) || answer.text === undefined) return answer;
    const prefix = `# ${mark.marker}\nimport time\ntime.sleep(${mark.sleep})\n`;
    return { text: answer.text.replace('```python\n', `\`\`\`python\n${prefix}`) };
  },
};

const sandboxDir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-cancel-sandbox-'));
const SANDBOX_ENV = { AMY_SANDBOX_CONCURRENCY: '1', AMY_SANDBOX_DIR: sandboxDir };

let demo: DemoService;
let svc: TestService;
let worker: ChildProcess | null = null;

/** Every run's code seen in the sandbox directory, and whether it was a run (with data) or a syntax check. */
const seen = new Map<string, Set<'run' | 'preflight'>>();
const watcher = setInterval(() => {
  for (const name of fs.readdirSync(sandboxDir)) {
    if (!name.startsWith(RUN_DIR_PREFIX)) continue;
    const input = path.join(sandboxDir, name, 'input');
    try {
      const code = fs.readFileSync(path.join(input, 'code.py'), 'utf8');
      const kind = fs.existsSync(path.join(input, 'summary.json')) ? 'run' : 'preflight';
      seen.set(code, (seen.get(code) ?? new Set()).add(kind));
    } catch {
      // not written yet, or already removed
    }
  }
}, 10);
const sawMarker = (marker: string, kind?: 'run' | 'preflight') =>
  [...seen].some(([code, kinds]) => code.includes(`# ${marker}\n`) && (!kind || kinds.has(kind)));

beforeAll(async () => {
  demo = await startDemoService({
    scripted: { rules: [markedCode, ...defaultRules.filter((rule) => rule.step !== 'ds_code')] },
    env: SANDBOX_ENV,
  });
  svc = demo.svc;
});
afterAll(async () => {
  clearInterval(watcher);
  if (worker) await killHard(worker);
  await demo?.close();
  fs.rmSync(sandboxDir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

async function startTurn(question: string, code?: { marker: string; sleep: number }): Promise<string> {
  if (code) nextCode = code;
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: demo.user.apiKey,
    body: { messages: [{ role: 'user', content: question }] },
  });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

async function getTurn(id: string): Promise<Turn> {
  const res = await api(svc.url, 'GET', `/v1/turns/${id}`, { key: demo.user.apiKey });
  expect(res.status).toBe(200);
  return expectSchema(turnSchema, res.body);
}

const ended = (id: string) =>
  svc.temporal.workflow
    .getHandle(id)
    .result()
    .catch(() => undefined);

const STARTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;

/** A finished turn's log, read whole: what the sandbox step narrated of its runs, per attempt, and the steps retried. */
async function analysisNarrationsOf(turnId: string) {
  const stream = openEventStream(`${svc.url}/v1/turns/${turnId}/events`, { apiKey: demo.user.apiKey });
  await stream.closedByServer;
  stream.close();
  const narrations = stream.events
    .filter((e) => e.type === 'agent.thought' && e.data.step === 'ds_run' && String(e.data.delta).includes('[analysis'))
    .map((e) => ({ attempt: e.data.attempt, delta: String(e.data.delta) }));
  const retried = stream.events.filter((e) => e.type === 'step.retry').map((e) => e.data.step);
  return { narrations, retried };
}

async function pendingAnalysis(id: string): Promise<{ attempt: number; started: boolean } | undefined> {
  const { raw } = await svc.temporal.workflow.getHandle(id).describe();
  const pending = (raw.pendingActivities ?? []).find((p) => p.activityType?.name === 'runAnalysis');
  return pending && { attempt: pending.attempt ?? 0, started: pending.state === STARTED };
}

test('a turn cancelled while its analysis waits behind a slow run: its code never runs, and the queue goes on', async () => {
  const slow = await startTurn(DS_MEAN, { marker: 'slow-turn', sleep: 25 });
  await until('the slow turn’s run', () => sawMarker('slow-turn', 'run'));

  const doomed = await startTurn(DS_MEAN, { marker: 'cancelled-turn', sleep: 3 });
  // Its analysis activity has started: it waits for the one slot, which the slow run holds.
  await until('the cancelled turn’s analysis to start', async () => (await pendingAnalysis(doomed))?.started);
  expect(sawMarker('cancelled-turn')).toBe(false);
  const cancel = await api(svc.url, 'POST', `/v1/turns/${doomed}/cancel`, { key: demo.user.apiKey });
  expect(cancel.status).toBe(202);
  await ended(doomed);
  expect((await getTurn(doomed)).error?.code).toBe('cancelled');

  // The slow turn finishes, and a turn queued after the cancelled one runs: the queue is first come,
  // first served, so the cancelled turn's code would have run (at least its syntax check) before it.
  await ended(slow);
  expect((await getTurn(slow)).status).toBe('completed');
  const after = await startTurn(DS_MEAN, { marker: 'later-turn', sleep: 0 });
  await ended(after);
  expect((await getTurn(after)).status).toBe('completed');
  expect(sawMarker('later-turn', 'run')).toBe(true);
  expect(sawMarker('cancelled-turn')).toBe(false);
});

test('an attempt that times out is killed when its retry comes, instead of running out its clock ahead of it', async () => {
  await svc.stopWorker(); // this one runs as a process of its own, which the test can stall
  worker = await spawnWorkerProcess(svc.config, { env: SANDBOX_ENV });
  const workerPid = worker.pid!;

  // Longer than the sandbox's 30 s wall clock: left alone, the run would end only by it, as a timeout.
  const turnId = await startTurn(DS_MEAN, { marker: 'stalled-turn', sleep: 600 });
  await until('the run of the first attempt', () => sawMarker('stalled-turn', 'run'));
  const [firstRun] = await until('the first attempt’s sandboxed process', () => {
    const found = sandboxProcessesOf([workerPid]);
    return found.length > 0 ? found : undefined;
  });

  // The worker stalls (an event loop blocked, a paused container): no heartbeats, so Temporal times the
  // attempt out after its heartbeat timeout and schedules the retry.
  process.kill(workerPid, 'SIGSTOP');
  try {
    await until('the retry to be scheduled', async () => ((await pendingAnalysis(turnId))?.attempt ?? 0) >= 2);
  } finally {
    process.kill(workerPid, 'SIGCONT');
  }

  // The first attempt's process is killed, well before the wall clock would have ended it.
  await until('the first attempt’s process to be gone', () => !fs.existsSync(`/proc/${firstRun!.pid}`), 60_000);
  await ended(turnId);
  const turn = await getTurn(turnId);
  expect(turn.status).toBe('completed');

  const { narrations, retried } = await analysisNarrationsOf(turnId);
  // The first attempt never finished its run: no narration of it. Its retry (attempt 2) ran the same
  // slow code, which the wall clock ended; the debugged code, a new activity's first attempt, answered.
  expect(narrations).toEqual([
    { attempt: 2, delta: expect.stringContaining('analysis failed (timeout)') },
    { attempt: 1, delta: expect.stringContaining('analysis ran in') },
  ]);
  expect(retried).toEqual(['ds_run']);
});

test('a worker stopped (SIGTERM) during a run, past its grace: the run is killed, the worker exits 0, and another worker runs the step again', async () => {
  await svc.stopWorker();
  if (worker) await killHard(worker);
  worker = await spawnWorkerProcess(svc.config, { env: { ...SANDBOX_ENV, AMY_SHUTDOWN_GRACE_SECONDS: '1' } });
  const stopping = worker;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    stopping.once('exit', (code, signal) => resolve({ code, signal })),
  );

  // Longer than the grace, well within the wall clock: the run is handed back, not finished or timed out.
  const turnId = await startTurn(DS_MEAN, { marker: 'stopped-worker-turn', sleep: 8 });
  await until('the run of the first attempt', () => sawMarker('stopped-worker-turn', 'run'));
  const [run] = await until('the first attempt’s sandboxed process', () => {
    const found = sandboxProcessesOf([stopping.pid!]);
    return found.length > 0 ? found : undefined;
  });

  stopping.kill('SIGTERM');
  expect(await exited).toEqual({ code: 0, signal: null });
  // The worker waited for its cancelled run to be gone before it exited: nothing of it is left behind.
  expect(fs.existsSync(`/proc/${run!.pid}`)).toBe(false);

  worker = await spawnWorkerProcess(svc.config, { env: SANDBOX_ENV });
  await ended(turnId);
  expect((await getTurn(turnId)).status).toBe('completed');
  // The handed-back attempt never narrated a result; its retry, on the other worker, ran the code whole.
  const { narrations, retried } = await analysisNarrationsOf(turnId);
  expect(narrations).toEqual([{ attempt: 2, delta: expect.stringContaining('analysis ran in') }]);
  expect(retried).toEqual(['ds_run']);
});
