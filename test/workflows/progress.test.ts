/**
 * The `progress` query (workflows/progress.ts): the step most recently started that still runs, the
 * steps completed in order, and the agents in the order they started — live, and once the turn ended.
 * Steps are the ids of contracts/steps.ts; a step that runs again (the debug loop, an agent invoked
 * twice, the critic per finding) is listed once per run under its one id.
 */
import { progressQuery, type WorkflowProgress } from '../../workflows/definitions';
import {
  AGENT,
  completed,
  failed,
  gate,
  routing,
  upstreamUnavailable,
  useWorkflowEnvironment,
  waitFor,
  type ActivityOutput,
  type Fakes,
} from './support';

const { runTurn } = useWorkflowEnvironment();
const { DS, DE, HC } = AGENT;

const ROUTED = ['start_turn', 'recall_memory', 'classify_vagueness', 'route', 'rephrase'];

/** The progress once `ready` holds of it, asking again until it does (for a step that ends by itself). */
async function progressOnce(
  handle: { query: (query: typeof progressQuery) => Promise<WorkflowProgress> },
  ready: (progress: WorkflowProgress) => boolean,
): Promise<WorkflowProgress> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const progress = await handle.query(progressQuery);
    if (ready(progress) || Date.now() > deadline) return progress;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A fake that holds `fake`'s answer until `held` is opened. */
function holding<N extends keyof Fakes>(held: ReturnType<typeof gate>, fake: Fakes[N]): Fakes[N] {
  return (async (input: never) => {
    await waitFor(held, 'the test did not release a held step', 10_000);
    return (fake as (input: never) => Promise<unknown>)(input);
  }) as Fakes[N];
}

test('pattern 6, queried step by step: parallel agents, the coach, then the whole turn', async () => {
  const dsRun = gate();
  const expert = gate();
  const coach = gate();
  const seen: WorkflowProgress[] = [];
  const run = await runTurn(
    {
      route: async () => routing(HC, [DS, DE]),
      runAnalysis: holding<'runAnalysis'>(dsRun, async ({ code }) => ({
        status: 'ok',
        result: {},
        code,
        autoFixed: false,
        durationMs: 1,
      })),
      consultDomainExpert: holding<'consultDomainExpert'>(expert, async () => ({
        answer: 'Expert.',
        costUsd: 0,
        toolCalls: 0,
        urls: [],
      })),
      coachUser: holding<'coachUser'>(coach, async () => ({
        reply: 'Coach.',
        verdict: 'NOREC',
        finish: 'CONTINUE',
        closingSummary: null,
        anchors: [],
        citedAnchors: [],
        costUsd: 0,
      })),
    },
    {
      whileRunning: async (handle, calls) => {
        await Promise.all([calls.started('runAnalysis'), calls.started('consultDomainExpert')]);
        seen.push(await handle.query(progressQuery));
        dsRun.open();
        seen.push(await progressOnce(handle, (p) => p.completed_steps.includes('ds_finish')));
        expert.open();
        await calls.started('coachUser');
        seen.push(await handle.query(progressQuery));
        coach.open();
        await handle.result();
        seen.push(await handle.query(progressQuery));
      },
    },
  );

  completed(run);
  // Both supporting agents running: the sandbox run started last.
  expect(seen[0]).toEqual({
    current_step: 'ds_run',
    completed_steps: [...ROUTED, 'ds_plan', 'ds_code'],
    agents_started: ['data_science', 'domain_expert'],
  });
  // Data Science done, the expert still running.
  const dataScience = ['ds_plan', 'ds_code', 'ds_run', 'ds_summary', 'ds_extract', 'ds_finish'];
  expect(seen[1]).toEqual({
    current_step: 'domain_expert',
    completed_steps: [...ROUTED, ...dataScience],
    agents_started: ['data_science', 'domain_expert'],
  });
  // The pre-validation hop: the supporting finding's gates, critic and assessment, before the coach.
  const preValidation = ['gates', 'critic', 'assessment', 'pre_validation'];
  expect(seen[2]).toEqual({
    current_step: 'health_coach',
    completed_steps: [...ROUTED, ...dataScience, 'domain_expert', ...preValidation],
    agents_started: ['data_science', 'domain_expert', 'health_coach'],
  });
  expect(seen[3]).toEqual({
    current_step: null,
    completed_steps: [
      ...ROUTED,
      ...dataScience,
      'domain_expert',
      ...preValidation,
      'health_coach',
      'reflection',
      'validation',
      'synthesis',
      'memory',
      'complete_turn',
    ],
    agents_started: ['data_science', 'domain_expert', 'health_coach'],
  });
});

test('the debug loop and a second invocation of an agent: each run listed under its one step id', async () => {
  let runs = 0;
  const runAnalysis: Fakes['runAnalysis'] = async ({ code }): Promise<ActivityOutput<'runAnalysis'>> =>
    ++runs === 1
      ? { status: 'error', kind: 'exception', error: 'NameError', debuggable: true }
      : { status: 'ok', result: {}, code, autoFixed: false, durationMs: 1 };
  let progress: WorkflowProgress | undefined;
  const run = await runTurn(
    {
      route: async () => routing(DE, [DS]),
      runAnalysis,
      reflect: async () => ({ dataScience: null, domainExpert: 'Follow-up?' }),
    },
    {
      whileRunning: async (handle) => {
        await handle.result();
        progress = await handle.query(progressQuery);
      },
    },
  );

  completed(run);
  expect(progress).toEqual({
    current_step: null,
    completed_steps: [
      ...ROUTED,
      'ds_plan',
      'ds_code',
      'ds_run',
      'ds_debug',
      'ds_run',
      'ds_summary',
      'ds_extract',
      'ds_finish',
      'domain_expert',
      'reflection',
      'domain_expert',
      'gates',
      'critic',
      'assessment',
      'validation',
      'synthesis',
      'memory',
      'complete_turn',
    ],
    agents_started: ['data_science', 'domain_expert'],
  });
});

test('the Investigator: its own steps and agent, live and at the end', async () => {
  const hypotheses = gate();
  const seen: WorkflowProgress[] = [];
  const run = await runTurn(
    {
      classifyVagueness: async () => ({ vagueness: 'high' }),
      proposeHypotheses: holding<'proposeHypotheses'>(hypotheses, async () => ({
        digest: '',
        hypotheses: [],
        costUsd: 0,
        startedAt: '2026-01-01T00:00:00.000Z',
      })),
    },
    {
      whileRunning: async (handle, calls) => {
        await calls.started('proposeHypotheses');
        seen.push(await handle.query(progressQuery));
        hypotheses.open();
        await handle.result();
        seen.push(await handle.query(progressQuery));
      },
    },
  );

  completed(run);
  expect(seen).toEqual([
    {
      current_step: 'investigator_hypotheses',
      completed_steps: ['start_turn', 'recall_memory', 'classify_vagueness'],
      agents_started: ['investigator'],
    },
    {
      current_step: null,
      completed_steps: [
        'start_turn',
        'recall_memory',
        'classify_vagueness',
        'investigator_hypotheses',
        'investigator_test',
        'validation',
        'investigator_briefing',
        'fact_check',
        'memory',
        'complete_turn',
      ],
      agents_started: ['investigator'],
    },
  ]);
});

test('a failed turn: the failed step is neither current nor completed', async () => {
  let progress: WorkflowProgress | undefined;
  const run = await runTurn(
    {
      route: async () => routing(DE),
      consultDomainExpert: async () => {
        throw upstreamUnavailable();
      },
    },
    {
      whileRunning: async (handle) => {
        await handle.result().catch(() => undefined);
        progress = await handle.query(progressQuery);
      },
    },
  );

  expect(failed(run).type).toBe('upstream_unavailable');
  expect(progress).toEqual({
    current_step: null,
    completed_steps: ROUTED,
    agents_started: ['domain_expert'],
  });
});
