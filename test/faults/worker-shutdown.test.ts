/**
 * A worker told to stop mid-turn (SIGTERM, as a deploy or a scale-down does) drains within its bound
 * (docs/operations.md#deploying): it stops polling at once, lets its running activities finish for
 * AMY_SHUTDOWN_GRACE_SECONDS, hands back those still running after that (cancelled, they fail as
 * attempts and Temporal runs them again on another worker), closes its pools and exits 0. Either way
 * the turn completes on the other worker with a log that holds every event once, in order.
 */
import type { ChildProcess } from 'node:child_process';
import { api } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { openEventStream, type ReceivedEvent } from '../support/sse-client';
import { killHard, spawnWorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

let svc: TestService;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  // Paced deltas: the reply takes seconds, so a stop lands in the middle of it.
  svc = await startTestService({ scripted: { streamChunkDelayMs: 500 } });
  await svc.stopWorker(); // this suite's workers are real processes
});
afterAll(async () => {
  for (const worker of workers) await killHard(worker);
  await svc?.close();
});

async function startWorker(graceSeconds: number) {
  const lines: string[] = [];
  const child = await spawnWorkerProcess(svc.config, {
    env: { AMY_SHUTDOWN_GRACE_SECONDS: String(graceSeconds), LOG_LEVEL: 'info' },
    onLine: (line) => lines.push(line),
  });
  workers.push(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, lines, exited };
}

const THANKS = 'thanks a lot, that was a wonderful and very helpful explanation!';

async function startTurn(apiKey: string) {
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: apiKey,
    body: { messages: [{ role: 'user', content: THANKS }] },
  });
  expect(created.status).toBe(201);
  const turnId = created.body.id as string;
  return { turnId, stream: openEventStream(`${svc.url}/v1/turns/${turnId}/events`, { apiKey }) };
}

/** The log is whole: gapless ids, one start and one end, each agent started and completed once. */
function expectWholeLog(events: ReceivedEvent[]) {
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  const count = (type: string) => events.filter((e) => e.type === type).length;
  expect(count('turn.started')).toBe(1);
  expect(count('turn.completed')).toBe(1);
  expect(events[events.length - 1].type).toBe('turn.completed');
  const agents = (type: string) => events.filter((e) => e.type === type).map((e) => e.data.agent);
  expect(agents('agent.started')).toEqual(['synthesis', 'memory']);
  expect(agents('agent.completed')).toEqual(['synthesis', 'memory']);
}

const replyDeltas = (events: ReceivedEvent[], attempt: number) =>
  events.filter((e) => e.type === 'agent.thought' && e.data.agent === 'synthesis' && e.data.attempt === attempt);

const answerOf = (events: ReceivedEvent[]) =>
  (events[events.length - 1].data as { result: { answer: string } }).result.answer;

test('SIGTERM within the grace: the running step finishes on the stopping worker, the rest of the turn runs on another, and the worker exits 0', async () => {
  const user = await svc.createUser();
  const first = await startWorker(60);
  const { turnId, stream } = await startTurn(user.apiKey);
  await stream.waitFor((e) => e.type === 'agent.thought' && e.data.agent === 'synthesis');

  first.child.kill('SIGTERM');
  const second = await startWorker(60);
  const exit = await first.exited;
  expect(exit).toEqual({ code: 0, signal: null });
  expect(first.lines.some((line) => line.includes('worker draining'))).toBe(true);
  expect(first.lines.some((line) => line.includes('worker stopped'))).toBe(true);

  await stream.closedByServer;
  const events = stream.events;
  expectWholeLog(events);
  // Nothing was handed back: the reply streamed once, in one attempt, on the stopping worker.
  expect(events.filter((e) => e.type === 'step.retry')).toHaveLength(0);
  expect(
    replyDeltas(events, 1)
      .map((e) => e.data.delta)
      .join(''),
  ).toBe(answerOf(events));
  const calls = await svc.database.db.llmCall.findMany({ where: { turnId } });
  expect(calls.filter((c) => c.step === 'fallback_reply').map((c) => c.outcome)).toEqual(['success']);

  second.child.kill('SIGTERM');
  expect(await second.exited).toEqual({ code: 0, signal: null });
});

test('SIGTERM past the grace: the running step is handed back (its model call aborted), runs again on another worker, and the worker exits 0', async () => {
  const user = await svc.createUser();
  const first = await startWorker(1);
  const { turnId, stream } = await startTurn(user.apiKey);
  await stream.waitFor((e) => e.type === 'agent.thought' && e.data.agent === 'synthesis');

  first.child.kill('SIGTERM');
  expect(await first.exited).toEqual({ code: 0, signal: null });
  expect(first.lines.some((line) => line.includes('worker stopped'))).toBe(true);
  const deltasBeforeStop = replyDeltas(stream.events, 1).length;
  expect(deltasBeforeStop).toBeGreaterThan(0);

  const second = await startWorker(1);
  await stream.closedByServer;
  const events = stream.events;
  expectWholeLog(events);
  // The handed-back step ran again, announced; it went on from what the first attempt had shown, so the deltas
  // of both, concatenated, are the answer (append-only, as the contract says).
  expect(events.find((e) => e.type === 'step.retry')?.data).toMatchObject({ step: 'fallback_reply', attempt: 2 });
  const text = (attempt: number) =>
    replyDeltas(events, attempt)
      .map((e) => e.data.delta)
      .join('');
  expect(text(2)).not.toBe('');
  expect(text(1) + text(2)).toBe(answerOf(events));
  expect(replyDeltas(events, 1)).toHaveLength(deltasBeforeStop);
  // The stopping worker aborted its call rather than leaving it to run out; steps before it ran once.
  const calls = await svc.database.db.llmCall.findMany({ where: { turnId }, orderBy: { createdAt: 'asc' } });
  expect(calls.filter((c) => c.step === 'fallback_reply').map((c) => c.outcome)).toEqual(['aborted', 'success']);
  expect(calls.filter((c) => c.step === 'route')).toHaveLength(1);

  const turn = await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: user.apiKey });
  expect(turn.body.status).toBe('completed');
  second.child.kill('SIGTERM');
  expect(await second.exited).toEqual({ code: 0, signal: null });
});
