/**
 * Asking the user back, in the workflow: a turn whose request carries `interaction` asks before the Investigator's
 * scan, or what an ambiguous question means, and waits; the answer arrives as the `provideInput` Update, whose validator refuses with nothing changed an
 * answer to another request, an option not offered, a second answer, a late one; at the deadline the turn goes on
 * with the default (or fails, when asked to); a cancel during the wait ends the turn. Without `interaction` the
 * turn never asks.
 *
 * The deadline here is one to two seconds, given in the workflow's input directly (the API takes ten seconds and
 * up): this tier runs on a real dev server, where time passes as it does.
 */
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import type { InputAnswer, InputRequest, Interaction } from '../../contracts/interaction';
import { provideInputUpdate } from '../../workflows/definitions';
import type { TurnWorkflow } from '../../workflows';
import { gate, routing, useWorkflowEnvironment, waitFor, type ActivityOutput } from './support';

const { runTurn } = useWorkflowEnvironment();

const vague = { classifyVagueness: async (): Promise<ActivityOutput<'classifyVagueness'>> => ({ vagueness: 'high' }) };
const investigatorFakes = vague;
const confirming = (overrides: Partial<Interaction> = {}): { interaction: Interaction } => ({
  interaction: { accepts: ['confirmation'], timeout_seconds: 60, on_expiry: 'continue', ...overrides },
});
const clarifying = (overrides: Partial<Interaction> = {}) => confirming({ accepts: ['clarification'], ...overrides });

const WHICH_SLEEP = 'By your sleep, do you mean how long you sleep or your sleep score?';
/** The clarify step finds "How has my sleep been?" ambiguous: two readings, the first the likelier. */
const ambiguous = {
  clarify: async (): Promise<ActivityOutput<'clarify'>> => ({
    ambiguous: true,
    about: 'metric',
    question: WHICH_SLEEP,
    options: [
      { id: 'duration', label: 'How long I sleep' },
      { id: 'score', label: 'My sleep score' },
    ],
    likelyOptionId: 'duration',
    freeText: true,
  }),
};

type Handle = WorkflowHandle<typeof TurnWorkflow>;
const answer = (handle: Handle, body: InputAnswer) => handle.executeUpdate(provideInputUpdate, { args: [body] });

/** The update's refusal type, or 'accepted'. */
async function outcomeOf(update: Promise<unknown>): Promise<string> {
  try {
    await update;
    return 'accepted';
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) return (err.cause as { type?: string }).type ?? 'failed';
    throw err;
  }
}

test('without interaction, a vague question goes straight to the Investigator: nothing is asked', async () => {
  const run = await runTurn(investigatorFakes);
  expect(run.calls.names).not.toContain('requestInput');
  expect(run.calls.names).not.toContain('clarify');
  expect(run.calls.names).toContain('proposeHypotheses');
  expect(run.result).not.toBeNull();
});

test('asked to confirm the scan, "yes" runs the Investigator; the question carries its options, default and estimate', async () => {
  let request: InputRequest | undefined;
  const run = await runTurn(investigatorFakes, {
    input: confirming(),
    whileRunning: async (handle, calls) => {
      await calls.started('requestInput');
      request = calls.only('requestInput').request;
      await expect(answer(handle, { request_id: request.request_id, option_id: 'scan' })).resolves.toMatchObject({
        request_id: request.request_id,
        option_id: 'scan',
        source: 'user',
      });
    },
  });
  expect(request).toMatchObject({
    kind: 'confirmation',
    options: [{ id: 'scan' }, { id: 'quick' }],
    default_option_id: 'quick',
    free_text: false,
  });
  // The estimate is the asking activity's to read (from the recent scans): the workflow asks for it by name.
  expect(run.calls.only('requestInput').estimate).toBe('investigator_scan');
  expect(request!.request_id).toMatch(/^inq_[0-9a-f]{32}$/);
  expect(run.calls.only('receiveInput').received).toMatchObject({ option_id: 'scan', source: 'user' });
  expect(run.calls.names).toContain('proposeHypotheses');
  expect(run.calls.names).not.toContain('route');
});

test('"no" takes the cheaper path: the question is routed as any other', async () => {
  const run = await runTurn(
    { ...investigatorFakes, route: async () => routing('') },
    {
      input: confirming(),
      whileRunning: async (handle, calls) => {
        await calls.started('requestInput');
        await answer(handle, { request_id: calls.only('requestInput').request.request_id, option_id: 'quick' });
      },
    },
  );
  expect(run.calls.names).toContain('route');
  expect(run.calls.names).not.toContain('proposeHypotheses');
  expect(run.result).not.toBeNull();
});

test('at the deadline the turn goes on with the default, said to come from the expiry; a late answer is refused', async () => {
  let late = '';
  const recorded = gate();
  const run = await runTurn(
    {
      ...investigatorFakes,
      route: async () => routing(''),
      // Held until the late answer has been tried, so it reaches a turn still running.
      receiveInput: () => waitFor(recorded, 'the late answer was never tried'),
    },
    {
      input: confirming({ timeout_seconds: 1 }),
      whileRunning: async (handle, calls) => {
        await calls.started('receiveInput');
        late = await outcomeOf(
          answer(handle, { request_id: calls.only('requestInput').request.request_id, option_id: 'scan' }),
        );
        recorded.open();
      },
    },
  );
  expect(run.calls.only('receiveInput').received).toMatchObject({ option_id: 'quick', source: 'expiry' });
  expect(run.calls.names).toContain('route');
  expect(late).toBe('InputExpiredRefusal');
});

test('on_expiry "fail": the turn fails with input_expired once the deadline passes', async () => {
  const run = await runTurn(investigatorFakes, { input: confirming({ timeout_seconds: 1, on_expiry: 'fail' }) });
  expect(run.failure?.type).toBe('input_expired');
  expect(run.calls.only('failTurn').error.code).toBe('input_expired');
  expect(run.calls.only('receiveInput').received).toMatchObject({ source: 'expiry', option_id: null });
});

test('answers the validator refuses change nothing; of two answers at once exactly one is taken', async () => {
  const outcomes: Record<string, string> = {};
  const run = await runTurn(investigatorFakes, {
    input: confirming(),
    whileRunning: async (handle, calls) => {
      await calls.started('requestInput');
      const { request_id } = calls.only('requestInput').request;
      outcomes.wrongRequest = await outcomeOf(answer(handle, { request_id: 'inq_other', option_id: 'scan' }));
      outcomes.unknownOption = await outcomeOf(answer(handle, { request_id, option_id: 'maybe' }));
      outcomes.text = await outcomeOf(answer(handle, { request_id, text: 'sure, go ahead' }));
      const both = await Promise.all([
        outcomeOf(answer(handle, { request_id, option_id: 'scan' })),
        outcomeOf(answer(handle, { request_id, option_id: 'quick' })),
      ]);
      outcomes.concurrent = both.sort().join(',');
      outcomes.again = await outcomeOf(answer(handle, { request_id, option_id: 'quick' }));
    },
  });
  expect(outcomes).toEqual({
    wrongRequest: 'InputNotRequested',
    unknownOption: 'InputOptionInvalid',
    text: 'InputOptionInvalid',
    concurrent: 'InputAlreadyReceived,accepted',
    again: 'InputAlreadyReceived',
  });
  expect(run.calls.count('receiveInput')).toBe(1);
  expect(run.result).not.toBeNull();
});

test('a cancel during the wait ends the turn cleanly, as cancelled', async () => {
  const run = await runTurn(investigatorFakes, {
    input: confirming(),
    whileRunning: async (handle, calls) => {
      await calls.started('requestInput');
      await handle.cancel();
    },
  });
  expect(run.calls.only('failTurn').error.code).toBe('cancelled');
  expect(run.calls.names).not.toContain('receiveInput');
});

test('a clarification: asked as the clarify step wrote it, the answer read by the rest of the turn as a follow-up', async () => {
  const run = await runTurn(ambiguous, {
    input: clarifying(),
    whileRunning: async (handle, calls) => {
      await calls.started('requestInput');
      await answer(handle, { request_id: calls.only('requestInput').request.request_id, option_id: 'score' });
    },
  });
  expect(run.calls.only('requestInput').request).toMatchObject({
    kind: 'clarification',
    question: WHICH_SLEEP,
    default_option_id: 'duration',
    free_text: true,
  });
  const exchange = [
    { role: 'assistant', content: WHICH_SLEEP },
    { role: 'user', content: 'My sleep score' },
  ];
  expect(run.calls.only('route').messages.slice(-2)).toEqual(exchange);
  expect(run.calls.only('rephraseQuestions').messages.slice(-2)).toEqual(exchange);
  // Synthesis and memory keep the user's own question, and synthesis is told what was asked and answered.
  const synthesis = run.calls.only('synthesise');
  expect(synthesis.userMessage).toBe(run.calls.only('classifyVagueness').messages.at(-1)!.content);
  expect(synthesis.clarification).toEqual({ question: WHICH_SLEEP, answer: 'My sleep score', assumed: false });
  expect(run.result).not.toBeNull();
});

test('a clarification that allows text takes the user’s own words', async () => {
  const run = await runTurn(ambiguous, {
    input: clarifying(),
    whileRunning: async (handle, calls) => {
      await calls.started('requestInput');
      const { request_id } = calls.only('requestInput').request;
      await answer(handle, { request_id, text: 'how rested I feel, really' });
    },
  });
  expect(run.calls.only('route').messages.at(-1)).toEqual({ role: 'user', content: 'how rested I feel, really' });
  expect(run.calls.only('receiveInput').received).toMatchObject({ option_id: null, text: 'how rested I feel, really' });
});

test('unanswered, a clarification goes on with the most likely reading, and synthesis is told it was assumed', async () => {
  const run = await runTurn(ambiguous, { input: clarifying({ timeout_seconds: 1 }) });
  expect(run.calls.only('receiveInput').received).toMatchObject({ option_id: 'duration', source: 'expiry' });
  expect(run.calls.only('route').messages.at(-1)).toEqual({ role: 'user', content: 'How long I sleep' });
  expect(run.calls.only('synthesise').clarification).toMatchObject({ answer: 'How long I sleep', assumed: true });
});

test('a question the clarify step finds clear is not asked about; a turn that accepts only confirmations never asks it', async () => {
  const clear = await runTurn({}, { input: clarifying() });
  expect(clear.calls.names).toContain('clarify');
  expect(clear.calls.names).not.toContain('requestInput');
  expect(clear.calls.only('synthesise')).not.toHaveProperty('clarification');
  const confirmationsOnly = await runTurn(ambiguous, { input: confirming() });
  expect(confirmationsOnly.calls.names).not.toContain('clarify');
  expect(confirmationsOnly.calls.names).not.toContain('requestInput');
});
