/**
 * Durability: a worker killed with SIGKILL in the middle of a streaming step is replaced, and the
 * turn completes. Steps finished before the kill are not run again (the ledger shows it), the event
 * log stays gapless, deterministic events are not duplicated, and the stream stays append-only: the
 * new attempt goes on from the text the dead one had shown, so a client that concatenates the deltas,
 * and that lost its connection in between and came back with Last-Event-Id, ends with the answer.
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

test('SIGKILL during the streamed reply, a client reconnecting in between: a new worker finishes the turn, repeating neither finished steps nor shown text', async () => {
  const user = await svc.createUser();
  worker = await spawnWorkerProcess(svc.config);
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: 'thanks a lot, that was a wonderful and very helpful explanation!' }] },
  });
  const turnId = created.body.id as string;
  const url = `${svc.url}/v1/turns/${turnId}/events`;
  const before = openEventStream(url, { apiKey: user.apiKey, reconnect: false });
  // The reply goes out a sentence at a time (each as the fact-check passes it): the first has gone out, the rest
  // is still streaming when the worker dies.
  await before.waitFor((e) => e.type === 'agent.thought');
  await killHard(worker);
  // The client's connection drops too; it comes back after the new worker started, from the last event it had.
  before.close();
  const seen = before.events;
  const deltasBeforeKill = seen.filter((e) => e.type === 'agent.thought').length;
  expect(deltasBeforeKill).toBeGreaterThan(0);

  worker = await spawnWorkerProcess(svc.config);
  const after = openEventStream(url, { apiKey: user.apiKey, lastEventId: seen.at(-1)!.id });
  await after.closedByServer;
  const events = [...seen, ...after.events];

  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  const count = (type: string) => events.filter((e) => e.type === type).length;
  expect(count('turn.started')).toBe(1);
  // Once per agent, however many attempts: the streamed reply, then the memory step.
  const agents = (type: string) => events.filter((e) => e.type === type).map((e) => e.data.agent);
  expect(agents('agent.started')).toEqual(['synthesis', 'memory']);
  expect(agents('agent.completed')).toEqual(['synthesis', 'memory']);
  expect(count('turn.completed')).toBe(1);
  expect(events[events.length - 1].type).toBe('turn.completed');

  // The retry is announced; the new attempt adds to what the dead one showed, and the whole is the answer.
  const retry = events.find((e) => e.type === 'step.retry');
  expect(retry?.data).toMatchObject({ step: 'fallback_reply', attempt: 2 });
  const deltas = (attempt?: number) =>
    events
      .filter((e) => e.type === 'agent.thought' && e.data.agent === 'synthesis')
      .filter((e) => attempt === undefined || e.data.attempt === attempt)
      .map((e) => e.data.delta)
      .join('');
  const answer = (events[events.length - 1].data as { result: { answer: string } }).result.answer;
  expect(deltas()).toBe(answer);
  expect(deltas(1)).not.toBe('');
  expect(deltas(2)).not.toBe('');
  expect(deltas(1) + deltas(2)).toBe(answer);
  expect(events.filter((e) => e.type === 'agent.thought' && e.data.attempt === 1).length).toBe(deltasBeforeKill);

  // The new attempt asked the model to go on from the text already shown (the Messages API's prefill).
  const replies = svc.scripted.requests.entries().filter((r) => r.step === 'fallback_reply');
  expect(replies.at(-1)!.messages.at(-1)).toEqual({ role: 'assistant', content: deltas(1).trimEnd() });

  // Steps that finished before the kill were not executed again.
  const calls = await svc.database.db.llmCall.findMany({ where: { turnId }, orderBy: { createdAt: 'asc' } });
  expect(calls.filter((c) => c.step === 'classify_vagueness')).toHaveLength(1);
  expect(calls.filter((c) => c.step === 'route')).toHaveLength(1);
  expect(calls.filter((c) => c.step === 'fallback_reply' && c.outcome === 'success')).toHaveLength(1);

  const turn = await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: user.apiKey });
  expect(turn.body.status).toBe('completed');
});
