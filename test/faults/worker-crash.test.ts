/**
 * Durability: a worker killed with SIGKILL in the middle of a streaming step is replaced, and the
 * turn completes. Steps finished before the kill are not run again (the ledger shows it), the event
 * log stays gapless, deterministic events are not duplicated, and the retried attempt's deltas are
 * told apart from the dead attempt's.
 */
import type { ChildProcess } from 'node:child_process';
import { api } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { openEventStream } from '../support/sse-client';
import { killHard, spawnWorkerProcess } from '../support/worker-process';

let svc: TestService;
let worker: ChildProcess | null = null;

beforeAll(async () => {
  svc = await startTestService({ scripted: { streamChunkDelayMs: 150 } });
  await svc.stopWorker(); // this suite's workers are real processes
});
afterAll(async () => {
  if (worker) await killHard(worker);
  await svc?.close();
});

test('SIGKILL during the streamed reply: a new worker finishes the turn without repeating finished steps', async () => {
  const user = await svc.createUser();
  worker = await spawnWorkerProcess(svc.config);
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: 'thanks a lot, that was a wonderful and very helpful explanation!' }] },
  });
  const turnId = created.body.id as string;
  const stream = openEventStream(`${svc.url}/v1/turns/${turnId}/events`, { apiKey: user.apiKey });
  await stream.waitFor((e) => e.type === 'agent.thought' && e.id >= 5);
  await killHard(worker);
  const deltasBeforeKill = stream.events.filter((e) => e.type === 'agent.thought').length;
  expect(deltasBeforeKill).toBeGreaterThan(0);

  worker = await spawnWorkerProcess(svc.config);
  await stream.closedByServer;
  const events = stream.events;

  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  const count = (type: string) => events.filter((e) => e.type === type).length;
  expect(count('turn.started')).toBe(1);
  // Once per agent, however many attempts: the streamed reply, then the memory step.
  const agents = (type: string) => events.filter((e) => e.type === type).map((e) => e.data.agent);
  expect(agents('agent.started')).toEqual(['synthesis', 'memory']);
  expect(agents('agent.completed')).toEqual(['synthesis', 'memory']);
  expect(count('turn.completed')).toBe(1);
  expect(events[events.length - 1].type).toBe('turn.completed');

  // The retry is announced, and the new attempt's deltas alone make the answer.
  const retry = events.find((e) => e.type === 'step.retry');
  expect(retry?.data).toMatchObject({ step: 'fallback_reply', attempt: 2 });
  const attempt2 = events.filter(
    (e) => e.type === 'agent.thought' && e.data.agent === 'synthesis' && e.data.attempt === 2,
  );
  const answer = (events[events.length - 1].data as { result: { answer: string } }).result.answer;
  expect(attempt2.map((e) => e.data.delta).join('')).toBe(answer);
  expect(events.filter((e) => e.type === 'agent.thought' && e.data.attempt === 1).length).toBe(deltasBeforeKill);

  // Steps that finished before the kill were not executed again.
  const calls = await svc.database.db.llmCall.findMany({ where: { turnId }, orderBy: { createdAt: 'asc' } });
  expect(calls.filter((c) => c.step === 'classify_vagueness')).toHaveLength(1);
  expect(calls.filter((c) => c.step === 'route')).toHaveLength(1);
  expect(calls.filter((c) => c.step === 'fallback_reply' && c.outcome === 'success')).toHaveLength(1);

  const turn = await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: user.apiKey });
  expect(turn.body.status).toBe('completed');
});
