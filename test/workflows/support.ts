/**
 * The workflow test tier: `TurnWorkflow` on a Temporal dev server that this file starts (the CLI from
 * .venv, through @temporalio/testing), run by a worker whose activities are inline fakes returning
 * canned values, as in temporalio/samples-typescript's `hello-world/src/mocha/workflows-mocks.test.ts`.
 * No Postgres, no HTTP, no model: each turn in a fraction of a second. Nothing here reads the jest
 * global setup's services.
 *
 * A suite calls `useWorkflowEnvironment()` once at its top level, then `runTurn(fakes)` per test with
 * only the fakes that test is about; `baseFakes()` answers the rest.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode, type LogEntry } from '@temporalio/worker';
import type { TurnActivities } from '../../activities';
import type { AgentFinding, GateVerdict, GatesOutcome } from '../../contracts/findings';
import type { RoutableAgent } from '../../contracts/steps';
import type { FactCheckOutcome, TurnResult } from '../../contracts/turn';
import { personalAnchorEntries } from '../../checks/personal-anchors';
import type { CriticDecision } from '../../activities/steps/critic/verdict';
import type { Hypothesis } from '../../activities/agents/investigator';
import type { TurnWorkflowInput } from '../../workflows/definitions';
import type { TurnWorkflow } from '../../workflows';
import { temporalCliPath } from '../../dev/stack/local-temporal';
import { createTimeSkippingTestEnvironment } from '../support/time-skipping-server';

export type ActivityName = keyof TurnActivities;
type ActivityInput<N extends ActivityName> = Parameters<TurnActivities[N]>[0];
export type ActivityOutput<N extends ActivityName> = Awaited<ReturnType<TurnActivities[N]>>;
/** One fake per activity, with the real activity's input and output types. */
export type Fakes = { [N in ActivityName]: (input: ActivityInput<N>) => Promise<ActivityOutput<N>> };

// ---------------------------------------------------------------------------------------------------
// Logs: the worker's own (an expected activity failure is a WARN) and the workflow's `log` calls.

/** Every entry the worker runtime logged in this file, workflow `log.warn`s included. */
const workerLog: LogEntry[] = [];

/**
 * The first entry logged that `matches`, waiting for it: with core logs forwarded, the runtime holds
 * every entry back ~100 ms to sort them. Undefined when none came within `ms`.
 */
export async function loggedEntry(matches: (entry: LogEntry) => boolean, ms = 3_000): Promise<LogEntry | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const entry = workerLog.find(matches);
    if (entry || Date.now() > deadline) return entry;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

try {
  Runtime.install({
    logger: new DefaultLogger('WARN', (entry) => {
      workerLog.push(entry);
      // Fakes fail on purpose, and cancelled fakes complete after their workflow closed, so warnings
      // are expected; errors still show.
      if (entry.level === 'ERROR') console.error(`[worker] ${entry.message}`, entry.meta ?? '');
    }),
    // The SDK core's own logs go through the same logger instead of straight to stderr.
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'WARN' }, forward: {} } },
  });
} catch {
  // A runtime is already installed in this jest worker: logs go wherever it sends them.
}

// ---------------------------------------------------------------------------------------------------
// Recording activity calls.

interface ActivityCall<N extends ActivityName = ActivityName> {
  name: N;
  input: ActivityInput<N>;
}

/** The activity calls of one turn, in the order they started, and when each started and ended. */
class ActivityRecorder {
  readonly calls: ActivityCall[] = [];
  /** `start <name>` and `end <name>` in the order they happened, to see what overlapped. */
  readonly timeline: string[] = [];
  private readonly waiters: Array<{ name: ActivityName; count: number; resolve: () => void }> = [];

  /** The names of the activities called, in order. */
  get names(): ActivityName[] {
    return this.calls.map((call) => call.name);
  }

  inputsOf<N extends ActivityName>(name: N): ActivityInput<N>[] {
    return this.calls.filter((call) => call.name === name).map((call) => call.input as ActivityInput<N>);
  }

  /** The input of the only call of `name`; throws unless it was called exactly once. */
  only<N extends ActivityName>(name: N): ActivityInput<N> {
    const inputs = this.inputsOf(name);
    if (inputs.length !== 1) throw new Error(`expected one call of ${name}, got ${inputs.length}: ${this.names}`);
    return inputs[0];
  }

  count(name: ActivityName): number {
    return this.inputsOf(name).length;
  }

  /** Resolves once `name` has started `count` times. */
  started(name: ActivityName, count = 1): Promise<void> {
    if (this.count(name) >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ name, count, resolve }));
  }

  record<N extends ActivityName>(name: N, input: ActivityInput<N>): void {
    this.calls.push({ name, input } as ActivityCall);
    this.timeline.push(`start ${name}`);
    for (const waiter of this.waiters.filter((w) => w.name === name && this.count(name) >= w.count)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  ended(name: ActivityName): void {
    this.timeline.push(`end ${name}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// Canned values.

export const TURN_INPUT: Omit<TurnWorkflowInput, 'turnId'> = {
  userId: 'user_test',
  messages: [
    { role: 'user', content: 'Hi Amy' },
    { role: 'assistant', content: 'Hello! How can I help?' },
    { role: 'user', content: 'How has my sleep changed this month?' },
  ],
  context: { include_memory: true, include_biomarkers: true },
};
export const USER_MESSAGE = 'How has my sleep changed this month?';
export const MEMORY = 'Prefers morning runs; goal: 7 h of sleep.';

const DS = 'data_science';
const DE = 'domain_expert';
const HC = 'health_coach';
export type Agent = RoutableAgent;
export const AGENT = { DS, DE, HC } as const;

/** The router's answer: `main` '' is the conversational fallback. */
export const routing = (main: Agent | '', supporting: Agent[] = []): ActivityOutput<'route'> => ({
  main_agent: main,
  supporting_agents: supporting,
  collaboration_workflow: '',
});

/** The question the rephrase fake gives `agent`. */
export const questionFor = (agent: Agent) => `Question for the ${agent}`;

/** An inference (a trend), which every validation step judges: the gates, the Critic and the Assessment. */
export const agentFinding = (id: string, source: AgentFinding['source'] = 'data_science'): AgentFinding => ({
  finding: {
    id,
    claim: `Claim ${id}`,
    kind: 'trend',
    feature: 'sleep_minutes',
    target: null,
    numbers: { effect: -20 },
    n: 30,
    window: 'last 30 days',
  },
  windowDays: 30,
  source,
});

/** A description (the mean of a window): the gates and the Critic judge it; the Assessment has nothing to assess. */
export const describingFinding = (id: string, source: AgentFinding['source'] = 'data_science'): AgentFinding => ({
  finding: {
    id,
    claim: `Claim ${id}`,
    kind: 'scalar',
    feature: 'sleep_minutes',
    target: null,
    numbers: { mean: 412 },
    n: 30,
    window: 'last 30 days',
  },
  windowDays: 30,
  statistic: 'mean',
  source,
});

const gatesOutcome = (findingId: string, verdict: GateVerdict): GatesOutcome => ({
  finding_id: findingId,
  gates: [{ gate: 'sample_size', verdict: verdict === 'rejected' ? 'failed' : 'passed', detail: { applicable: true } }],
  verdict,
  hard_rejection: verdict === 'rejected' ? 'sample_size' : null,
  passes: verdict === 'rejected' ? 0 : 1,
  applicable: 1,
});

/** A gates fake: every finding validated, except those given another verdict. */
export const gatesSaying =
  (verdicts: Record<string, GateVerdict> = {}): Fakes['runGates'] =>
  async ({ findings }) =>
    findings.map(({ finding }) => gatesOutcome(finding.id, verdicts[finding.id] ?? 'validated'));

/** A Critic fake: every finding accepted, except those given another decision. */
export const criticSaying =
  (decisions: Record<string, CriticDecision> = {}): Fakes['critiqueFinding'] =>
  async ({ finding }) => ({
    finding_id: finding.id,
    decision: decisions[finding.id] ?? 'accept',
    concerns: [],
    rationale: 'Canned critic rationale.',
    fallback: false,
  });

export const hypothesis = (id: string): Hypothesis => ({
  id,
  title: `Hypothesis ${id}`,
  rationale: 'Canned rationale.',
  test_plan: 'Compare the windows.',
  data_required: ['sleep_minutes'],
  missing_data_flag: false,
  expected_impact: 'medium',
  confidence: 0.8,
  next_action: 'Keep a sleep diary.',
  kind: 'scalar',
  feature_to_test: 'sleep_minutes',
  target_to_test: null,
});

/** A fact-check that found every number traced: what the answer-writing fakes report. */
export const CLEAN_FACT_CHECK: FactCheckOutcome = {
  numbers_checked: 0,
  issues: [],
  repairs: { resynthesised: false, removed: [] },
};

export const ANCHOR = { key: 'sleep_avg_14d', label: 'Sleep', value: 401, unit: 'min', n: 14, window: '14 days' };

/** Sensible answers for every activity: a pattern-2 turn (Data Science alone) that completes. */
function baseFakes(): Fakes {
  return {
    startTurn: async () => undefined,
    classifyVagueness: async () => ({ vagueness: 'low' }),
    clarify: async () => ({ ambiguous: false }),
    route: async () => routing(DS),
    replyConversationally: async () => ({
      answer: 'Happy to chat! Ask me about your data any time.',
      factCheck: CLEAN_FACT_CHECK,
    }),
    rephraseQuestions: async ({ routing: { main_agent, supporting_agents } }) =>
      Object.fromEntries(
        [main_agent, ...supporting_agents].filter((a): a is Agent => a !== '').map((a) => [a, questionFor(a)]),
      ),
    recallMemory: async ({ includeMemory }) => ({ summary: includeMemory ? MEMORY : '' }),
    planAnalysis: async ({ question }) => ({
      plan: {
        approach: `Approach to: ${question}`,
        spec: { kind: 'scalar', feature: 'sleep_minutes', target: null, windowDays: 30 },
      },
      startedAt: '2026-01-01T00:00:00.000Z',
      costUsd: 0.01,
    }),
    writeAnalysisCode: async () => ({ code: 'result = sleep.mean()', costUsd: 0.01 }),
    runAnalysis: async ({ code }) => ({ status: 'ok', result: { mean: 412 }, code, autoFixed: false, durationMs: 5 }),
    debugAnalysisCode: async ({ error }) => ({ code: `# fixed: ${error}`, costUsd: 0.01 }),
    summariseAnalysis: async ({ question }) => ({ summary: `Data Science summary of: ${question}`, costUsd: 0.01 }),
    extractFindings: async ({ idPrefix }) => ({
      findings: [agentFinding(`${idPrefix}-001`)],
      descriptive: false,
      costUsd: 0.01,
    }),
    finishDataScience: async () => undefined,
    consultDomainExpert: async ({ question, invocation }) => ({
      answer: `Domain Expert (${invocation}) on: ${question}`,
      costUsd: 0.02,
      toolCalls: 1,
      urls: [],
    }),
    coachUser: async ({ question }) => ({
      reply: `Coach reply to: ${question}`,
      verdict: 'YESREC',
      finish: 'CONTINUE',
      closingSummary: null,
      anchors: [ANCHOR],
      citedAnchors: [ANCHOR.key],
      costUsd: 0.02,
    }),
    reflect: async () => ({ dataScience: null, domainExpert: null }),
    runGates: gatesSaying(),
    critiqueFinding: criticSaying(),
    recordCriticFallback: async ({ findingId }) => ({
      finding_id: findingId,
      decision: 'downgrade',
      concerns: [],
      rationale: 'Canned fallback: the Critic could not be reached.',
      fallback: true,
    }),
    assessFinding: async ({ finding }) => ({
      mechanism: `Mechanism of ${finding.id}`,
      novelty: 'supported',
      strategy: `Strategy for ${finding.id}`,
      citations: [],
    }),
    proposeHypotheses: async () => ({
      digest: 'Sleep down 20 min vs the prior 30 days.',
      hypotheses: [hypothesis('h1'), hypothesis('h2')],
      costUsd: 0.03,
      startedAt: '2026-01-01T00:00:00.000Z',
    }),
    testHypotheses: async ({ hypotheses }) => ({
      findings: hypotheses.map((h) => agentFinding(`inv-${h.id}`, 'investigator')),
    }),
    writeBriefing: async ({ validated }) => ({
      briefing: `Briefing on ${validated.length} findings.`,
      costUsd: 0.03,
      factCheck: { numbers_checked: 0, issues: [], repairs: { resynthesised: false, removed: [] } },
    }),
    synthesise: async ({ anchors }) => ({
      answer: 'Synthesised answer.',
      factSheet: [],
      personalAnchors: personalAnchorEntries(anchors),
      factCheck: CLEAN_FACT_CHECK,
    }),
    checkAnswer: async ({ answer, findings }) => ({
      answer,
      factSheet: findings.map(({ finding, source }) => ({
        claim: `Claim ${finding.id}`,
        value: 412,
        unit: 'min',
        source,
        n: finding.n,
        window: finding.window,
      })),
      factCheck: CLEAN_FACT_CHECK,
    }),
    rememberTurn: async () => ({ added: 1 }),
    completeTurn: async ({ answer, factSheet, personalAnchors, agentsUsed, validator }) => ({
      answer,
      fact_sheet: factSheet,
      personal_anchors: personalAnchors ?? [],
      agents_used: agentsUsed,
      validator,
      cost_usd: 0,
      duration_ms: 0,
    }),
    failTurn: async () => undefined,
    requestInput: async ({ request, estimate }) =>
      estimate ? { ...request, estimate: { cost_usd: 0.2, duration_seconds: 40 } } : request,
    receiveInput: async () => undefined,
    purgeExpiredTurnEvents: async () => 0,
    reconcileAbandonedTurns: async () => [],
  };
}

// ---------------------------------------------------------------------------------------------------
// Failures and synchronisation for fakes.

/** What the worker's upstream-failure interceptor makes of a failed model call, made non-retryable. */
export const upstreamUnavailable = (requestId = 'req_upstream') =>
  ApplicationFailure.create({
    type: 'UpstreamUnavailableError',
    message: 'Anthropic returned 529 overloaded',
    details: [{ request_id: requestId, status: 529 }],
    nonRetryable: true,
  });

export const modelOutputInvalid = () =>
  ApplicationFailure.nonRetryable('the model answered with something that is not JSON', 'ModelOutputInvalidError');

export interface Gate {
  promise: Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * Inside a fake: waits for `gate`, or fails the activity if it is not opened within `ms` (so a test
 * whose premise is wrong fails with `why` instead of hanging), or ends when the worker cancels the
 * activity at shutdown.
 */
export async function waitFor(gate: Gate, why: string, ms = 5_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(ApplicationFailure.nonRetryable(why, 'TestPremiseFailed')), ms);
  });
  try {
    await Promise.race([gate.promise, timeout, Context.current().cancelled]);
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------------
// Running turns.

interface RunTurnOptions {
  input?: Partial<TurnWorkflowInput>;
  /** Runs while the worker is up, alongside the turn: to query it or cancel it mid-turn. */
  whileRunning?: (handle: WorkflowHandle<typeof TurnWorkflow>, calls: ActivityRecorder) => Promise<void>;
}

export interface TurnRun {
  calls: ActivityRecorder;
  /** The turn's workflow, to read its history. */
  handle: WorkflowHandle<typeof TurnWorkflow>;
  /** The workflow's result when it completed. */
  result: TurnResult | null;
  /** The workflow's failure when it failed: its `type` is the turn's error code. */
  failure: ApplicationFailure | null;
}

export interface WorkflowTestEnvironment {
  runTurn(fakes?: Partial<Fakes>, options?: RunTurnOptions): Promise<TurnRun>;
  /** Replays a turn's history against the workflow code the worker runs; throws when it diverges. */
  replay(history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>, workflowId: string): Promise<void>;
}

interface RunningTurn {
  fakes: Fakes;
  calls: ActivityRecorder;
}

/** A Temporal dev server for one test file, quiet and without the default cap on dispatch. */
export function createLocalTestEnvironment(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: temporalCliPath() },
      ip: '127.0.0.1',
      log: { format: 'json', level: 'error' },
      // The server reads its transfer queue (which hands each new workflow task to matching) at most
      // 20 times a second by default: once a turn or two has spent the burst, every step waited ~50 ms.
      extraArgs: ['--dynamic-config-value', 'history.transferProcessorMaxPollRPS=10000'],
    },
  });
}

/**
 * Starts a dev server, bundles the workflow code and starts one worker for the calling file (in its
 * beforeAll), and stops them after it. The worker's activities look up the running turn's fakes by
 * workflow id, so turns share the worker (creating and shutting down one per turn took ~0.3 s).
 */
export function useWorkflowEnvironment(
  options: {
    /** On Temporal's time-skipping test server (../support/time-skipping-server.ts): a turn's timers fire at once. */
    timeSkipping?: boolean;
  } = {},
): WorkflowTestEnvironment {
  const turns = new Map<string, RunningTurn>();
  let env: TestWorkflowEnvironment | undefined;
  let worker: Worker | undefined;
  let workerRun: Promise<void> | undefined;
  let bundle: string | undefined;
  const taskQueue = 'workflow-tests';
  let runs = 0;

  const activities = Object.fromEntries(
    (Object.keys(baseFakes()) as ActivityName[]).map((name) => [
      name,
      async (input: never) => {
        const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
        const turn = turns.get(workflowId);
        if (!turn) throw ApplicationFailure.nonRetryable(`no fakes for ${workflowId}`, 'TestPremiseFailed');
        turn.calls.record(name, input);
        try {
          return await (turn.fakes[name] as (input: never) => Promise<unknown>)(input);
        } finally {
          turn.calls.ended(name);
        }
      },
    ]),
  );

  beforeAll(async () => {
    let code: string;
    [env, { code }] = await Promise.all([
      options.timeSkipping ? createTimeSkippingTestEnvironment() : createLocalTestEnvironment(),
      bundleWorkflowCode({
        workflowsPath: require.resolve('../../workflows'),
        logger: quietBundlerLogger,
      }),
    ]);
    bundle = code;
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { code },
      activities,
    });
    workerRun = worker.run();
  }, 60_000);

  afterAll(async () => {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await workerRun;
    await env?.teardown();
  });

  async function runTurn(overrides: Partial<Fakes> = {}, options: RunTurnOptions = {}): Promise<TurnRun> {
    if (!env || !workerRun) throw new Error('the workflow test environment did not start (see beforeAll)');
    const calls = new ActivityRecorder();
    const turnId = `turn_wf_${++runs}`;
    turns.set(turnId, { fakes: { ...baseFakes(), ...overrides }, calls });
    const handle = await env.client.workflow.start<typeof TurnWorkflow>('TurnWorkflow', {
      args: [{ ...TURN_INPUT, turnId, ...options.input }],
      workflowId: turnId,
      taskQueue,
    });
    let result: TurnResult | null = null;
    let failure: ApplicationFailure | null = null;
    const outcome = handle.result().then(
      (value) => void (result = value),
      (err: unknown) => {
        if (!(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure)) throw err;
        failure = err.cause;
      },
    );
    const workerStopped = workerRun.then(() => {
      throw new Error('the worker stopped during the turn');
    });
    await Promise.race([Promise.all([outcome, options.whileRunning?.(handle, calls)]), workerStopped]);
    return { calls, handle, result, failure };
  }

  async function replay(history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>, workflowId: string) {
    if (!bundle) throw new Error('the workflow test environment did not start (see beforeAll)');
    await Worker.runReplayHistory({ workflowBundle: { code: bundle } }, history, workflowId);
  }

  return { runTurn, replay };
}

/** The run's result; fails the test with the turn's own error when the turn failed instead. */
export function completed(run: TurnRun): TurnResult {
  if (run.failure) throw new Error(`the turn failed (${run.failure.type}): ${run.failure.message}`);
  if (!run.result) throw new Error('the turn has no result');
  return run.result;
}

/** The run's failure; fails the test when the turn completed instead. */
export function failed(run: TurnRun): ApplicationFailure {
  if (!run.failure) throw new Error(`the turn completed: ${JSON.stringify(run.result)}`);
  return run.failure;
}

const quietBundlerLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
  log: () => undefined,
};
