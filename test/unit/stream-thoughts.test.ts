/**
 * streamThoughts writes a streamed model reply to the event log as `agent.thought` deltas, in a segment of the
 * step's narration: one append in flight at a time, the text that arrives meanwhile merged into the next; on an
 * attempt after a failure, the reply goes on from what the earlier attempt showed of its segment (given to the
 * model as the start of its reply), and only what the model adds is written. Text the step writes itself is said
 * once. Unit tests with a fake model stream and a fake log whose appends take as long as the test says.
 */
import { openNarration } from '../../activities/runtime/narration';
import { streamThoughts } from '../../activities/runtime/stream-agent-reply';
import { emptySynthesisInputs } from '../support/synthesis-inputs';
import type { EventLog, NewTurnEvent } from '../../platform/event-log';
import type { Llm, LlmRequest, LlmResponse } from '../../platform/llm';

const REPLY = ['Your ', 'resting ', 'heart ', 'rate ', 'averaged ', '58 ', 'bpm ', 'over ', '90 ', 'days.'];

/** A model that sends the reply's deltas back to back, each awaited as the real SDK loop does. */
function fakeLlm(deltas: string[], steps: string[] = [], requests: LlmRequest[] = []): Llm {
  return {
    complete: () => Promise.reject(new Error('not used')),
    async stream(ctx, req, onDelta) {
      steps.push(ctx.step);
      requests.push(req);
      for (const delta of deltas) await onDelta(delta);
      return { text: deltas.join(''), message: { content: [{ type: 'text', text: deltas.join('') }] } } as LlmResponse;
    },
  };
}

/** A log that keeps what it is given, dropping a key it holds, as the real one does. */
function fakeLog(appendMs: number, failOn?: number, earlier: Array<NewTurnEvent<'agent.thought'>> = []) {
  const written: Array<NewTurnEvent<'agent.thought'>> = [];
  const stored = [...earlier];
  let appends = 0;
  const events: EventLog = {
    async append(_turnId, batch) {
      const n = ++appends;
      await new Promise((resolve) => setTimeout(resolve, appendMs));
      if (n === failOn) throw new Error('Connection terminated unexpectedly');
      for (const event of batch) {
        if (event.type !== 'agent.thought') throw new Error(`streamThoughts wrote ${event.type}`);
        if (event.dedupeKey && stored.some((e) => e.dedupeKey === event.dedupeKey)) continue;
        written.push(event);
        stored.push(event);
      }
      return [];
    },
    readAfter: () => Promise.resolve([]),
    readKeyed: async (_turnId, prefix) =>
      stored
        .filter((e) => e.dedupeKey?.startsWith(prefix))
        .map((e) => ({ key: e.dedupeKey!.slice(prefix.length), data: e.data })),
  };
  return { events, written };
}

const narrationOn = (events: EventLog, attempt = 1) =>
  openNarration(events, { turnId: 'turn_1', step: 'synthesis', activity: '7', attempt });

const call = {
  turnId: 'turn_1',
  modelCall: 'synthesis' as const,
  inputs: emptySynthesisInputs('How did I sleep?', 'data_science'),
  signal: new AbortController().signal,
  agent: 'synthesis' as const,
  request: { model: 'm', maxTokens: 10, messages: [] },
};

test('every character is written, in order, as the attempt’s agent.thought deltas, each naming its step', async () => {
  const { events, written } = fakeLog(0);
  const response = await streamThoughts({ llm: fakeLlm(REPLY) }, { ...call, narration: await narrationOn(events, 2) });
  expect(response.text).toBe(REPLY.join(''));
  expect(written.map((e) => e.data.delta).join('')).toBe(REPLY.join(''));
  for (const e of written) {
    expect(e).toEqual({
      type: 'agent.thought',
      data: expect.objectContaining({ attempt: 2, step: 'synthesis' }),
      dedupeKey: expect.stringMatching(/^thought:7:synthesis:0:\d+$/),
    });
  }
});

test('one of a step’s several model calls (the coach’s health_coach.main) is billed as that call, and its deltas name the step being attempted', async () => {
  const { events, written } = fakeLog(0);
  const ledgerSteps: string[] = [];
  await streamThoughts(
    { llm: fakeLlm(REPLY, ledgerSteps) },
    {
      ...call,
      narration: await openNarration(events, { turnId: 'turn_1', step: 'health_coach', activity: '9', attempt: 1 }),
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
  await streamThoughts({ llm: fakeLlm(REPLY) }, { ...call, narration: await narrationOn(events) });
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
  await expect(streamThoughts({ llm: slowModel }, { ...call, narration: await narrationOn(events) })).rejects.toThrow(
    'Connection terminated unexpectedly',
  );
  expect(sent.length).toBeLessThan(REPLY.length);
});

/** What an attempt cut short after `shown` left in the log: one delta of segment 0 of activity 7's synthesis. */
const cutAfter = (shown: string): Array<NewTurnEvent<'agent.thought'>> => [
  {
    type: 'agent.thought',
    data: { agent: 'synthesis', delta: shown, attempt: 1, step: 'synthesis' },
    dedupeKey: 'thought:7:synthesis:0:0',
  },
];

test('an attempt after a failure goes on from what the earlier one showed: the model is given it, and only the rest is written', async () => {
  const shown = 'Your resting heart rate averaged ';
  const { events, written } = fakeLog(0, undefined, cutAfter(shown));
  const requests: LlmRequest[] = [];
  // The model goes on after its prefill, which cannot end in whitespace: its next delta starts with the space.
  const response = await streamThoughts(
    { llm: fakeLlm([' 58 ', 'bpm over ', '90 days.'], [], requests) },
    { ...call, narration: await narrationOn(events, 2) },
  );
  expect(requests[0].messages.at(-1)).toEqual({ role: 'assistant', content: 'Your resting heart rate averaged' });
  expect(written.map((e) => e.data.delta).join('')).toBe('58 bpm over 90 days.');
  expect(shown + written.map((e) => e.data.delta).join('')).toBe(REPLY.join(''));
  expect(response.text).toBe(REPLY.join(''));
  expect(response.narrated).toBe(REPLY.join(''));
  // Each append keyed by where it starts in the segment, after what was shown.
  const offsets = written.map((e) => Number(e.dedupeKey!.split(':').at(-1)));
  expect(offsets[0]).toBe(shown.length);
  expect(offsets).toEqual(
    written.map(
      (_, i) =>
        shown.length +
        written
          .slice(0, i)
          .map((e) => e.data.delta)
          .join('').length,
    ),
  );
});

test('on a first attempt there is no prefill, and a second narration of the same attempt writes nothing twice', async () => {
  const { events, written } = fakeLog(0);
  const requests: LlmRequest[] = [];
  await streamThoughts({ llm: fakeLlm(REPLY, [], requests) }, { ...call, narration: await narrationOn(events) });
  expect(requests[0].messages).toEqual([]);
  // The same deltas again (a straggler of the attempt): every offset is written once.
  await streamThoughts({ llm: fakeLlm(REPLY) }, { ...call, narration: await narrationOn(events) });
  expect(written.map((e) => e.data.delta).join('')).toBe(REPLY.join(''));
});

test('text a step writes itself is said once across attempts: again the same, or different, it adds nothing', async () => {
  const { events, written } = fakeLog(0);
  const first = await narrationOn(events);
  await first.write('data_science', '\n[analysis ran in 840 ms]\n');
  const again = await narrationOn(events, 2);
  expect(again.shown).toBe('\n[analysis ran in 840 ms]\n');
  await again.write('data_science', '\n[analysis ran in 912 ms]\n');
  const third = await narrationOn(events, 3);
  await third.write('data_science', '\n[analysis ran in 840 ms]\n and more');
  expect(written.map((e) => e.data.delta)).toEqual(['\n[analysis ran in 840 ms]\n', ' and more']);
});
