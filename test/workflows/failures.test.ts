/**
 * How a turn fails: a step's failure becomes `failTurn` with the mapped code and a failed workflow;
 * a cancellation does too, even mid-activity; the memory step and the gate runner are best-effort.
 */
import { ApplicationFailure } from '@temporalio/client';
import {
  AGENT,
  completed,
  failed,
  gate,
  routing,
  modelOutputInvalid,
  upstreamUnavailable,
  useWorkflowEnvironment,
  waitFor,
  workerLog,
  type ActivityName,
  type Fakes,
  type TurnRun,
} from './support';

const { runTurn } = useWorkflowEnvironment();
const { DS, DE, HC } = AGENT;

/** Turns that between them reach every step. */
const SCENARIOS = {
  /** Pattern 6 with both reflection follow-ups. */
  specialist: {
    route: async () => routing(HC, [DS, DE]),
    reflect: async () => ({ dataScience: 'DS follow-up', domainExpert: 'DE follow-up' }),
  },
  /** Data Science whose first run fails, so a debug rewrite runs. */
  debugging: {
    route: async () => routing(DS),
    runAnalysis: async ({ code }) =>
      code.startsWith('# fixed')
        ? { status: 'ok', result: {}, code, autoFixed: false, durationMs: 1 }
        : { status: 'error', kind: 'exception', error: 'NameError', debuggable: true },
  },
  fallback: { route: async () => routing('') },
  investigator: { classifyVagueness: async () => ({ vagueness: 'high' }) },
} satisfies Record<string, Partial<Fakes>>;
type Scenario = keyof typeof SCENARIOS;

const throwing = (failure: () => Error) => async () => {
  throw failure();
};

/** Runs `scenario` with `step` failing as `failure`, and checks the failure is recorded once and raised. */
async function expectTurnFailure(
  scenario: Scenario,
  step: ActivityName,
  failure: () => Error,
  expected: { code: string; requestId: string },
): Promise<TurnRun> {
  const run = await runTurn({ ...SCENARIOS[scenario], [step]: throwing(failure) });

  const error = failed(run);
  const message = `Step ${step} failed: ${failure().message}`;
  expect({ type: error.type, message: error.message, nonRetryable: error.nonRetryable }).toEqual({
    type: expected.code,
    message,
    nonRetryable: true,
  });
  // Non-retryable: the step ran once, then the failure was recorded, last.
  expect(run.calls.count(step)).toBe(1);
  expect(run.calls.names.at(-1)).toBe('failTurn');
  expect(run.calls.only('failTurn').error).toEqual({
    code: expected.code,
    message,
    request_id: expected.requestId,
    docs_url: `https://docs.amy.health/concepts/errors#${expected.code}`,
  });
  if (step !== 'completeTurn') expect(run.calls.names).not.toContain('completeTurn');
  return run;
}

const MODEL_AND_AGENT_STEPS: Array<[ActivityName, Scenario]> = [
  ['classifyVagueness', 'specialist'],
  ['route', 'specialist'],
  ['rephraseQuestions', 'specialist'],
  ['planAnalysis', 'specialist'],
  ['writeAnalysisCode', 'specialist'],
  ['runAnalysis', 'specialist'],
  ['debugAnalysisCode', 'debugging'],
  ['summariseAnalysis', 'specialist'],
  ['extractFindings', 'specialist'],
  ['consultDomainExpert', 'specialist'],
  ['critiqueFinding', 'specialist'],
  ['assessFinding', 'specialist'],
  ['coachUser', 'specialist'],
  ['reflect', 'specialist'],
  ['synthesise', 'specialist'],
  ['replyConversationally', 'fallback'],
  ['proposeHypotheses', 'investigator'],
  ['writeBriefing', 'investigator'],
];

test.each(MODEL_AND_AGENT_STEPS)(
  '%s unavailable upstream (%s turn): failTurn upstream_unavailable with its request id, the workflow fails',
  async (step, scenario) => {
    await expectTurnFailure(scenario, step, () => upstreamUnavailable('req_529'), {
      code: 'upstream_unavailable',
      requestId: 'req_529',
    });
  },
);

test.each<[ActivityName, Scenario]>([
  ['route', 'specialist'],
  ['coachUser', 'specialist'],
  ['writeBriefing', 'investigator'],
])('%s answering invalid output (%s turn): failTurn model_output_invalid', async (step, scenario) => {
  await expectTurnFailure(scenario, step, modelOutputInvalid, { code: 'model_output_invalid', requestId: '' });
});

test.each<[ActivityName, Scenario]>([
  ['startTurn', 'specialist'],
  ['recallMemory', 'specialist'],
  ['finishDataScience', 'specialist'],
  ['testHypotheses', 'investigator'],
  ['checkAnswer', 'investigator'],
  ['completeTurn', 'specialist'],
])('%s failing with an unmapped error (%s turn): failTurn internal_error', async (step, scenario) => {
  await expectTurnFailure(scenario, step, () => ApplicationFailure.nonRetryable('relation "turns" is gone', 'Error'), {
    code: 'internal_error',
    requestId: '',
  });
});

test('a failing supporting agent fails the turn while the other is still running', async () => {
  const expertStarted = gate();
  const expertMayFinish = gate();
  const run = await runTurn({
    route: async () => routing(HC, [DS, DE]),
    planAnalysis: async () => {
      await waitFor(expertStarted, 'the Domain Expert did not start alongside Data Science');
      throw upstreamUnavailable();
    },
    consultDomainExpert: async () => {
      expertStarted.open();
      await waitFor(expertMayFinish, 'the test never let the expert finish', 10_000);
      return { answer: 'late', costUsd: 0, toolCalls: 0, urls: [] };
    },
  });
  expertMayFinish.open();

  expect(failed(run).type).toBe('upstream_unavailable');
  expect(run.calls.only('failTurn').error.message).toBe('Step planAnalysis failed: Anthropic returned 529 overloaded');
  expect(run.calls.timeline).toContain('start consultDomainExpert');
  expect(run.calls.timeline).not.toContain('end consultDomainExpert');
  expect(run.calls.names).not.toContain('coachUser');
});

test('UpstreamRequestError is never retried (the proxies list it non-retryable), and is an internal error', async () => {
  const run = await runTurn({
    route: throwing(() => ApplicationFailure.create({ type: 'UpstreamRequestError', message: '400 bad request' })),
  });

  expect(run.calls.count('route')).toBe(1);
  expect(failed(run).type).toBe('internal_error');
  expect(run.calls.only('failTurn').error.code).toBe('internal_error');
});

test('a retryable failure is retried, and the turn completes on the next attempt', async () => {
  let attempts = 0;
  const run = await runTurn({
    route: async () => {
      if (++attempts === 1) throw ApplicationFailure.retryable('529 overloaded', 'UpstreamUnavailableError');
      return routing(DE);
    },
  });

  expect(run.calls.count('route')).toBe(2);
  expect(run.calls.names).not.toContain('failTurn');
  expect(completed(run).agents_used).toEqual(['domain_expert']);
});

describe('the memory step is best-effort', () => {
  test.each<[string, Partial<Fakes>]>([
    ['a specialist turn', { route: async () => routing(DE) }],
    ['the fallback', SCENARIOS.fallback],
    ['the Investigator', SCENARIOS.investigator],
  ])('%s whose memory step fails still completes, with a warning', async (_, scenario) => {
    const warningsBefore = workerLog.length;
    const run = await runTurn({ ...scenario, rememberTurn: throwing(() => upstreamUnavailable()) });

    const result = completed(run);
    expect(run.calls.count('rememberTurn')).toBe(1);
    expect(run.calls.names.slice(-2)).toEqual(['rememberTurn', 'completeTurn']);
    expect(run.calls.names).not.toContain('failTurn');
    expect(run.calls.only('completeTurn').answer).toBe(result.answer);
    const turnId = run.calls.only('completeTurn').turnId;
    expect(workerLog.slice(warningsBefore)).toContainEqual(
      expect.objectContaining({
        level: 'WARN',
        message: 'the memory step failed; the turn completes without it',
        meta: expect.objectContaining({ turnId }),
      }),
    );
  });
});

describe('cancellation', () => {
  /** Runs `scenario` with `step` blocked, cancels the workflow once `step` is running, then unblocks it. */
  async function cancelDuring(step: ActivityName, scenario: Partial<Fakes> = {}): Promise<TurnRun> {
    const unblock = gate();
    const run = await runTurn(
      {
        ...scenario,
        [step]: async () => {
          await waitFor(unblock, `the test did not cancel the turn during ${step}`, 10_000);
          throw ApplicationFailure.nonRetryable(`${step} ran to its end after the cancellation`);
        },
      },
      {
        whileRunning: async (handle, calls) => {
          await calls.started(step);
          await handle.cancel();
        },
      },
    );
    unblock.open();
    return run;
  }

  function expectCancelled(run: TurnRun) {
    expect({ type: failed(run).type, message: failed(run).message }).toEqual({
      type: 'cancelled',
      message: 'The turn was cancelled.',
    });
    expect(run.calls.names.at(-1)).toBe('failTurn');
    expect(run.calls.only('failTurn').error).toEqual({
      code: 'cancelled',
      message: 'The turn was cancelled.',
      request_id: '',
      docs_url: 'https://docs.amy.health/concepts/errors#cancelled',
    });
    expect(run.calls.names).not.toContain('completeTurn');
  }

  test('cancelled while a step runs: the workflow does not wait for it, records cancelled and fails', async () => {
    const run = await cancelDuring('synthesise', { route: async () => routing(DE) });

    expectCancelled(run);
    // failTurn was recorded while synthesis was still running: the turn did not wait for it.
    expect(run.calls.timeline).not.toContain('end synthesise');
    expect(run.calls.names).not.toContain('rememberTurn');
  });

  test('cancelled during the memory step: cancellation is not swallowed as a memory failure', async () => {
    const run = await cancelDuring('rememberTurn', { route: async () => routing(DE) });

    expectCancelled(run);
  });

  test('cancelled while the gates run: cancellation is not taken for a gate runner that cannot run', async () => {
    const run = await cancelDuring('runGates', { route: async () => routing(DS) });

    expectCancelled(run);
    expect(run.calls.names).not.toContain('critiqueFinding');
    expect(run.calls.names).not.toContain('synthesise');
  });

  test('cancelled while the supporting agents run in parallel', async () => {
    const run = await cancelDuring('consultDomainExpert', { route: async () => routing(HC, [DS, DE]) });

    expectCancelled(run);
    expect(run.calls.names).not.toContain('coachUser');
  });
});
