/**
 * streamThoughts writes a streamed model reply to the event log as `agent.thought` deltas: one append
 * in flight at a time, the text that arrives meanwhile merged into the next. Unit tests with a fake
 * model stream and a fake log whose appends take as long as the test says.
 */
import { streamThoughts } from '../../activities/runtime/stream-agent-reply';
import type { EventLog, NewTurnEvent } from '../../platform/event-log';
import type { Llm, LlmResponse } from '../../platform/llm';

const REPLY = ['Your ', 'resting ', 'heart ', 'rate ', 'averaged ', '58 ', 'bpm ', 'over ', '90 ', 'days.'];

/** A model that sends the reply's deltas back to back, each awaited as the real SDK loop does. */
function fakeLlm(deltas: string[], steps: string[] = []): Llm {
  return {
    complete: () => Promise.reject(new Error('not used')),
    async stream(ctx, _req, onDelta) {
      steps.push(ctx.step);
      for (const delta of deltas) await onDelta(delta);
      return { text: deltas.join('') } as LlmResponse;
    },
  };
}

function fakeLog(appendMs: number, failOn?: number) {
  const written: Array<NewTurnEvent<'agent.thought'>> = [];
  let appends = 0;
  const events: EventLog = {
    async append(_turnId, batch) {
      const n = ++appends;
      await new Promise((resolve) => setTimeout(resolve, appendMs));
      if (n === failOn) throw new Error('Connection terminated unexpectedly');
      for (const event of batch) {
        if (event.type !== 'agent.thought') throw new Error(`streamThoughts wrote ${event.type}`);
        written.push(event);
      }
      return [];
    },
    readAfter: () => Promise.resolve([]),
  };
  return { events, written };
}

const call = {
  turnId: 'turn_1',
  modelCall: 'synthesis' as const,
  inputs: {
    userMessage: 'How did I sleep?',
    mainAgent: 'data_science' as const,
    mainAgentDraft: '',
    supportingInsights: '',
    findings: [],
    factSheet: [],
    personalAnchors: [],
    dataScienceFailed: false,
  },
  attempt: 2,
  signal: new AbortController().signal,
  agent: 'synthesis' as const,
  request: { model: 'm', maxTokens: 10, messages: [] },
};

test('every character is written, in order, as the attempt’s agent.thought deltas, each naming its step', async () => {
  const { events, written } = fakeLog(0);
  const response = await streamThoughts({ llm: fakeLlm(REPLY), events }, call);
  expect(response.text).toBe(REPLY.join(''));
  expect(written.map((e) => e.data.delta).join('')).toBe(REPLY.join(''));
  for (const e of written) {
    expect(e).toEqual({ type: 'agent.thought', data: expect.objectContaining({ attempt: 2, step: 'synthesis' }) });
  }
});

test('one of a step’s several model calls (the coach’s health_coach.main) is billed as that call, and its deltas name the step being attempted', async () => {
  const { events, written } = fakeLog(0);
  const ledgerSteps: string[] = [];
  await streamThoughts(
    { llm: fakeLlm(REPLY, ledgerSteps), events },
    {
      ...call,
      modelCall: 'health_coach.main',
      inputs: {
        messages: [{ role: 'user', content: 'Help me sleep more' }],
        question: 'Help me sleep more',
        verdict: 'YESREC',
        anchors: [],
        findings: [],
        supportingInsights: '',
        remindOfAnchors: false,
      },
      agent: 'health_coach',
    },
  );
  expect(ledgerSteps).toEqual(['health_coach.main']);
  expect(new Set(written.map((e) => e.data.step))).toEqual(new Set(['health_coach']));
});

test('deltas that arrive while an append is in flight go out together in the next one', async () => {
  const { events, written } = fakeLog(20);
  await streamThoughts({ llm: fakeLlm(REPLY), events }, call);
  // The first delta goes alone; the other nine arrive while it is being written.
  expect(written.map((e) => e.data.delta)).toEqual([REPLY[0], REPLY.slice(1).join('')]);
});

test('a log that cannot be written stops the stream, and the step fails with the log’s error', async () => {
  const { events } = fakeLog(5, 1);
  const sent: string[] = [];
  const llm = fakeLlm(REPLY);
  const watching: Llm = {
    ...llm,
    stream: (ctx, req, onDelta) => llm.stream(ctx, req, (d) => (sent.push(d), onDelta(d))),
  };
  const slowModel: Llm = {
    ...watching,
    // Deltas spaced out, so the failed append is seen before the reply ends.
    stream: (ctx, req, onDelta) =>
      watching.stream(ctx, req, async (d) => {
        await new Promise((resolve) => setTimeout(resolve, 10));
        await onDelta(d);
      }),
  };
  await expect(streamThoughts({ llm: slowModel, events }, call)).rejects.toThrow('Connection terminated unexpectedly');
  expect(sent.length).toBeLessThan(REPLY.length);
});
