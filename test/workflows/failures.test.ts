/**
 * How a turn fails: a step's failure becomes `failTurn` with the mapped code and a failed workflow;
 * a cancellation does too, even mid-activity; the memory step and the gate runner are best-effort.
 */
import { ApplicationFailure } from '@temporalio/client';
import { progressQuery, type WorkflowProgress } from '../../workflows/definitions';
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
  loggedEntry,
  type ActivityName,
  type Fakes,
  type TurnRun,
} from './support';

const { runTurn } = useWorkflowEnvironment();
const { DS, DE, HC } = AGENT;
const ROUTED = ['start_turn', 'recall_memory', 'classify_vagueness', 'route', 'rephrase'];

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
  // Non-retryable: the step ran once, then the failure was recorded. (Not necessarily last: a parallel
  // agent's step scheduled in the same workflow task as failTurn still starts.)
  expect(run.calls.count(step)).toBe(1);
  expect(run.calls.names.indexOf('failTurn')).toBeGreaterThan(run.calls.names.indexOf(step));
  // The turn's own error says nothing of an unexpected failure's cause (a driver message, a path):
  // that stays in the workflow's failure above, for engineers.
  const publicMessage = expected.code === 'internal_error' ? `Step ${step} failed unexpectedly.` : message;
  expect(run.calls.only('failTurn').error).toEqual({
    code: expected.code,
    message: publicMessage,
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
  // critiqueFinding and assessFinding are not here: once their retries are spent the finding is
  // downgraded or goes on unassessed, and the turn completes (validation.test.ts).
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
    const run = await runTurn({ ...scenario, rememberTurn: throwing(() => upstreamUnavailable()) });

    const result = completed(run);
    expect(run.calls.count('rememberTurn')).toBe(1);
    expect(run.calls.names.slice(-2)).toEqual(['rememberTurn', 'completeTurn']);
    expect(run.calls.names).not.toContain('failTurn');
    expect(run.calls.only('completeTurn').answer).toBe(result.answer);
    const turnId = run.calls.only('completeTurn').turnId;
    const warning = await loggedEntry((entry) => entry.meta?.turnId === turnId);
    expect(warning).toMatchObject({ level: 'WARN', message: 'the memory step failed; the turn completes without it' });
    // What failed is named only as far as the workflow's String(err) goes: "ActivityFailure: …".
    expect(warning?.meta?.error).toMatch(/^ActivityFailure/);
  });
});

describe('cancellation', () => {
  /**
   * Runs `scenario` with `activity` blocked, cancels the workflow once it is running, then unblocks it.
   * Also returns the turn's progress once it ended: the step cancelled must not count as completed
   * (which is all that tells a step that swallowed the cancellation from one that did not, since the
   * next activity would fail as cancelled anyway).
   */
  async function cancelDuring(activity: ActivityName, scenario: Partial<Fakes>) {
    const unblock = gate();
    let progress: WorkflowProgress | undefined;
    const run = await runTurn(
      {
        ...scenario,
        [activity]: async () => {
          await waitFor(unblock, `the test did not cancel the turn during ${activity}`, 10_000);
          throw ApplicationFailure.nonRetryable(`${activity} ran to its end after the cancellation`);
        },
      },
      {
        whileRunning: async (handle, calls) => {
          await calls.started(activity);
          await handle.cancel();
          await handle.result().catch(() => undefined);
          progress = await handle.query(progressQuery);
        },
      },
    );
    unblock.open();
    return { run, progress };
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
    const { run, progress } = await cancelDuring('synthesise', { route: async () => routing(DE) });

    expectCancelled(run);
    // failTurn was recorded while synthesis was still running: the turn did not wait for it.
    expect(run.calls.timeline).not.toContain('end synthesise');
    expect(run.calls.names).not.toContain('rememberTurn');
    expect(progress).toMatchObject({
      current_step: null,
      completed_steps: [...ROUTED, 'domain_expert', 'validation'],
    });
  });

  test('cancelled during the memory step: cancellation is not swallowed as a memory failure', async () => {
    const { run, progress } = await cancelDuring('rememberTurn', { route: async () => routing(DE) });

    expectCancelled(run);
    expect(progress?.completed_steps.at(-1)).toBe('synthesis');
    const turnId = run.calls.only('failTurn').turnId;
    expect(await loggedEntry((entry) => entry.meta?.turnId === turnId, 500)).toBeUndefined();
  });

  test('cancelled while the gates run: cancellation is not taken for a gate runner that cannot run', async () => {
    const { run, progress } = await cancelDuring('runGates', { route: async () => routing(DS) });

    expectCancelled(run);
    expect(run.calls.names).not.toContain('critiqueFinding');
    expect(run.calls.names).not.toContain('synthesise');
    expect(progress?.completed_steps.at(-1)).toBe('ds_finish');
  });

  test('cancelled while the supporting agents run in parallel', async () => {
    const { run, progress } = await cancelDuring('consultDomainExpert', { route: async () => routing(HC, [DS, DE]) });

    expectCancelled(run);
    expect(run.calls.names).not.toContain('coachUser');
    expect(progress?.completed_steps).not.toContain('domain_expert');
  });
});
