/**
 * Durability matrix: the worker is killed with SIGKILL while a turn is in each step of the pipeline
 * (every model step of every path, the sandbox run and the gates), then a new worker process is
 * started. For every step this proves that the turn completes; that the steps finished before the
 * kill are not executed again and the killed step succeeds once, on its second attempt (the
 * `llm_calls` ledger shows it); and that the event log stays gapless, with one `turn.started`, one
 * terminal event, last, and no deterministic event twice.
 *
 * A turn is held in a model step by a `hang` fault on that step, and the kill waits until the scripted
 * model has received the request. The sandbox run is held by analysis code that is slow (it sleeps,
 * as a real model's code can), the gates by the worker's cold Python gates process. Before each kill,
 * Temporal itself is asked which activity the turn is in; after it, the turn's one `step.retry` event
 * names the step that was running.
 *
 * Several turns are held at once, each in a different step, and one SIGKILL hits them all (three users
 * with the same demo data, at most three turns each: the per-user cap). Each turn is held before the
 * next one starts, so a fault meant for one turn's step cannot be taken by another turn.
 */
import type { ChildProcess } from 'node:child_process';
import { temporal } from '@temporalio/proto';
import type { StreamAgent } from '../../contracts/event-data';
import type { ModelCallId, StepId } from '../../contracts/steps';
import { turnSchema, type Turn } from '../../contracts/turn';
import { seedDemoHealthData } from '../../dev/synthetic-data/demo-user';
import { defaultRules, scriptedRules } from '../../dev/scripted-model/rules';
import type { ScriptedRule } from '../../dev/scripted-model/types';
import { api, expectSchema } from '../support/http';
import { startDemoService, type DemoService, type TestService } from '../support/service';
import { openEventStream, type ReceivedEvent, type SseSession } from '../support/sse-client';
import { killHard, spawnWorkerProcess } from '../support/worker-process';

jest.setTimeout(240_000);

const DS_MEAN = 'What is my average resting heart rate over the last 90 days?';
const DS_CORRELATION = 'Do my steps correlate with my sleep score over the last 90 days?';
/** A planted association the gates validate, so the Critic and then the Assessment review it. */
const DS_PLANTED = 'Are my active zone minutes related to my deep sleep minutes?';
const LAB_VALUE = 'Is an LDL of 124 something to worry about?';
const COACHING = 'Can you give me some tips for building a morning routine?';
const HEALTH_FACT = 'What is heart rate variability?';
const THANKS = 'thanks!';
const VAGUE = 'Is anything interesting in my data?';

const DS_ALONE: StreamAgent[] = ['data_science', 'synthesis', 'memory'];
const DS_THEN_DE: StreamAgent[] = ['data_science', 'domain_expert', 'synthesis', 'memory'];
const COACH: StreamAgent[] = ['health_coach', 'synthesis', 'memory'];
const DE_ALONE: StreamAgent[] = ['domain_expert', 'synthesis', 'memory'];
const FALLBACK: StreamAgent[] = ['synthesis', 'memory'];
const INVESTIGATOR: StreamAgent[] = ['investigator', 'memory'];

type Hold =
  /** A `hang` fault on this model call: the request is never answered. */
  | { hang: ModelCallId }
  /** The generated analysis code sleeps, so the sandbox run is still going when the worker dies. */
  | 'slow_code'
  /** The first gates run of a fresh worker starts the Python gates process (numpy, scipy, pandas). */
  | 'cold_gates';

interface KillCase {
  /** The step the worker dies in, as its `step.retry` event names it. */
  step: StepId;
  question: string;
  /** The activity that runs the step, as Temporal reports it pending at the kill. */
  activity: string;
  hold: Hold;
  /** The model calls the killed activity makes, by ledger id: its second attempt makes exactly these. */
  calls: Partial<Record<ModelCallId, number>>;
  /** `agent.started` (and `agent.completed`), in order: once per agent, whatever was retried. */
  agents: StreamAgent[];
  /** The analysis code fails first, so the Data Science agent debugs it. */
  brokenCode?: boolean;
}

const hang = (call: ModelCallId) => ({ hang: call });

/**
 * Three batches, one SIGKILL each; each user has at most three turns in a batch (the per-user cap). A
 * turn held by timing (the slow sandbox run, the cold gates) comes last in its batch, so it is still
 * held when the kill comes. The gates case is in the first batch: only the first worker is sure to
 * have a cold gates process.
 */
const BATCHES: KillCase[][] = [
  [
    {
      step: 'classify_vagueness',
      question: COACHING,
      activity: 'classifyVagueness',
      hold: hang('classify_vagueness'),
      calls: { classify_vagueness: 1 },
      agents: COACH,
    },
    { step: 'route', question: THANKS, activity: 'route', hold: hang('route'), calls: { route: 1 }, agents: FALLBACK },
    {
      step: 'rephrase',
      question: LAB_VALUE,
      activity: 'rephraseQuestions',
      hold: hang('rephrase'),
      calls: { rephrase: 1 },
      agents: DS_THEN_DE,
    },
    {
      step: 'ds_plan',
      question: DS_MEAN,
      activity: 'planAnalysis',
      hold: hang('ds_plan'),
      calls: { ds_plan: 1 },
      agents: DS_ALONE,
    },
    {
      step: 'ds_code',
      question: DS_CORRELATION,
      activity: 'writeAnalysisCode',
      hold: hang('ds_code'),
      calls: { ds_code: 1 },
      agents: DS_ALONE,
    },
    {
      step: 'investigator_hypotheses',
      question: VAGUE,
      activity: 'proposeHypotheses',
      hold: hang('investigator_hypotheses'),
      calls: { investigator_hypotheses: 1 },
      agents: INVESTIGATOR,
    },
    { step: 'gates', question: DS_MEAN, activity: 'runGates', hold: 'cold_gates', calls: {}, agents: DS_ALONE },
  ],
  [
    {
      step: 'ds_debug',
      question: DS_MEAN,
      activity: 'debugAnalysisCode',
      hold: hang('ds_debug'),
      calls: { ds_debug: 1 },
      agents: DS_ALONE,
      brokenCode: true,
    },
    {
      step: 'ds_summary',
      question: LAB_VALUE,
      activity: 'summariseAnalysis',
      hold: hang('ds_summary'),
      calls: { ds_summary: 1 },
      agents: DS_THEN_DE,
    },
    {
      step: 'ds_extract',
      question: DS_CORRELATION,
      activity: 'extractFindings',
      hold: hang('ds_extract'),
      calls: { ds_extract: 1 },
      agents: DS_ALONE,
    },
    {
      // The tool loop is one activity: its second attempt makes both model turns (tools, then the answer).
      step: 'domain_expert',
      question: HEALTH_FACT,
      activity: 'consultDomainExpert',
      hold: hang('domain_expert'),
      calls: { domain_expert: 2 },
      agents: DE_ALONE,
    },
    {
      // The coach's modules are one activity, held in its first (the recommend gate).
      step: 'health_coach',
      question: COACHING,
      activity: 'coachUser',
      hold: hang('health_coach.gate'),
      calls: { 'health_coach.gate': 1, 'health_coach.main': 1, 'health_coach.finish': 1 },
      agents: COACH,
    },
    {
      step: 'investigator_briefing',
      question: VAGUE,
      activity: 'writeBriefing',
      hold: hang('investigator_briefing'),
      calls: { investigator_briefing: 1 },
      agents: INVESTIGATOR,
    },
    {
      step: 'ds_run',
      question: DS_CORRELATION,
      activity: 'runAnalysis',
      hold: 'slow_code',
      calls: {},
      agents: DS_ALONE,
    },
  ],
  [
    {
      step: 'reflection',
      question: LAB_VALUE,
      activity: 'reflect',
      hold: hang('reflection'),
      calls: { reflection: 1 },
      agents: DS_THEN_DE,
    },
    {
      step: 'critic',
      // An inference, as for the Assessment below (the Critic reviews descriptions too).
      question: DS_PLANTED,
      activity: 'critiqueFinding',
      hold: hang('critic'),
      calls: { critic: 1 },
      agents: DS_ALONE,
    },
    {
      step: 'assessment',
      // An inference: a description, a level of the user's data, gets no Assessment.
      question: DS_PLANTED,
      activity: 'assessFinding',
      hold: hang('assessment'),
      calls: { assessment: 1 },
      agents: DS_ALONE,
    },
    {
      step: 'synthesis',
      question: DS_MEAN,
      activity: 'synthesise',
      hold: hang('synthesis'),
      calls: { synthesis: 1 },
      agents: DS_ALONE,
    },
    {
      step: 'memory',
      question: THANKS,
      activity: 'rememberTurn',
      hold: hang('memory'),
      calls: { memory: 1 },
      agents: FALLBACK,
    },
    {
      step: 'fallback_reply',
      question: THANKS,
      activity: 'replyConversationally',
      hold: hang('fallback_reply'),
      calls: { fallback_reply: 1 },
      agents: FALLBACK,
    },
  ],
];

/**
 * The code step, switchable by the test like a fault: the next request gets code that sleeps (a slow
 * but correct analysis) or code that fails once (so the agent debugs it); every other one the default.
 */
const SLOW_CODE_SECONDS = 6;
let nextCode: 'as_asked' | 'slow' | 'broken' = 'as_asked';
const ruleFor = (rules: ScriptedRule[], step: ModelCallId) => rules.find((rule) => rule.step === step)!;
const writeCode = ruleFor(defaultRules, 'ds_code');
const writeBrokenCode = ruleFor(scriptedRules({ brokenCode: 'first' }), 'ds_code');
const switchableCode: ScriptedRule = {
  step: 'ds_code',
  respond(req) {
    const mode = nextCode;
    nextCode = 'as_asked';
    if (mode === 'broken') return writeBrokenCode.respond(req);
    const answer = writeCode.respond(req);
    if (mode !== 'slow' || !('text' in answer) || answer.text === undefined) return answer;
    return {
      text: answer.text.replace('```python\n', `\`\`\`python\nimport time\ntime.sleep(${SLOW_CODE_SECONDS})\n`),
    };
  },
};

/** Users with the same demo data; a batch gives each at most three turns. */
const USERS = 3;

let demo: DemoService;
let svc: TestService;
type User = { userId: string; apiKey: string };
let users: User[];
let worker: ChildProcess | null = null;

beforeAll(async () => {
  demo = await startDemoService({
    scripted: { rules: [switchableCode, ...defaultRules.filter((rule) => rule.step !== 'ds_code')] },
  });
  svc = demo.svc;
  users = [demo.user];
  for (let i = 1; i < USERS; i++) {
    const user = await svc.createUser();
    await seedDemoHealthData(svc.database.pool, user.userId);
    users.push(user);
  }
  await svc.stopWorker(); // this suite's workers are real processes
  worker = await spawnWorkerProcess(svc.config);
});
afterAll(async () => {
  if (worker) await killHard(worker);
  await demo?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `probe` returns a value; fails with `what` after the deadline. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

const STARTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;

interface PendingActivity {
  activity: string;
  attempt: number;
  started: boolean;
}

async function pendingActivities(turnId: string): Promise<PendingActivity[]> {
  const { raw } = await svc.temporal.workflow.getHandle(turnId).describe();
  return (raw.pendingActivities ?? []).map((p) => ({
    activity: p.activityType?.name ?? '',
    attempt: p.attempt ?? 0,
    started: p.state === STARTED,
  }));
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

type LedgerRow = Awaited<ReturnType<TestService['database']['db']['llmCall']['findMany']>>[number];
const ledger = (turnId: string): Promise<LedgerRow[]> =>
  svc.database.db.llmCall.findMany({ where: { turnId }, orderBy: { createdAt: 'asc' } });

/** How many rows per step. */
function countByStep(rows: LedgerRow[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.step] = (counts[row.step] ?? 0) + 1;
  return counts;
}

interface KilledTurn {
  killCase: KillCase;
  turnId: string;
  stream: SseSession;
  /** What Temporal said the turn was running just before the kill. */
  pendingAtKill: PendingActivity[];
  /** The ledger as the dead worker left it. */
  ledgerAtKill: LedgerRow[];
  turn: Turn;
  ledger: LedgerRow[];
}

/** Starts the case's turn and resolves once it is held in the case's step. */
async function startHeldTurn(killCase: KillCase, user: User): Promise<{ turnId: string; stream: SseSession }> {
  const { hold } = killCase;
  if (typeof hold === 'object') svc.scripted.faults.inject({ kind: 'hang', step: hold.hang, times: 1 });
  if (hold === 'slow_code') nextCode = 'slow';
  if (killCase.brokenCode) nextCode = 'broken';
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: killCase.question }] },
  });
  expect(created.status).toBe(201);
  const turnId = created.body.id as string;
  const stream = openEventStream(`${svc.url}/v1/turns/${turnId}/events`, { apiKey: user.apiKey });
  if (typeof hold === 'object') {
    await until(`the ${hold.hang} request of ${killCase.question}`, async () =>
      svc.scripted.requests.entries().find((r) => r.step === hold.hang && r.fault === 'hang'),
    );
  }
  await until(`${killCase.activity} to be running for ${killCase.question}`, async () =>
    (await pendingActivities(turnId)).find((p) => p.activity === killCase.activity && p.started),
  );
  return { turnId, stream };
}

/** Holds each case's turn in its step, kills the worker once, starts a new one and waits for every turn. */
async function killDuring(batch: KillCase[]): Promise<KilledTurn[]> {
  const holds = batch.flatMap((c) => (typeof c.hold === 'object' ? [c.hold.hang] : []));
  expect(new Set(holds).size).toBe(holds.length); // one fault per step at a time, or turns could take each other's
  svc.scripted.requests.clear();
  const held: Array<{ killCase: KillCase; user: User; turnId: string; stream: SseSession }> = [];
  for (const [i, killCase] of batch.entries()) {
    const user = users[i % USERS];
    held.push({ killCase, user, ...(await startHeldTurn(killCase, user)) });
  }

  const pendingAtKill = await Promise.all(held.map(({ turnId }) => pendingActivities(turnId)));
  await killHard(worker!);
  worker = null;
  const ledgerAtKill = await Promise.all(held.map(({ turnId }) => ledger(turnId)));
  worker = await spawnWorkerProcess(svc.config);

  await Promise.all(
    held.map(({ stream, killCase }) =>
      withTimeout(stream.closedByServer, 180_000, `the end of the turn killed in ${killCase.step}`),
    ),
  );
  return Promise.all(
    held.map(async ({ killCase, user, turnId, stream }, i) => {
      const fetched = await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: user.apiKey });
      return {
        killCase,
        turnId,
        stream,
        pendingAtKill: pendingAtKill[i],
        ledgerAtKill: ledgerAtKill[i],
        turn: expectSchema(turnSchema, fetched.body),
        ledger: await ledger(turnId),
      };
    }),
  );
}

const ofType = (events: ReceivedEvent[], type: string) => events.filter((e) => e.type === type);
const agentsOf = (events: ReceivedEvent[], type: string) => ofType(events, type).map((e) => e.data.agent);
const duplicates = (keys: string[]) => keys.filter((key, i) => keys.indexOf(key) !== i);

describe.each(BATCHES.map((batch) => [batch.map((c) => c.step).join(', '), batch] as const))(
  'one SIGKILL while turns are in %s',
  (_steps, batch) => {
    let killed: KilledTurn[];
    beforeAll(async () => {
      killed = await killDuring(batch);
    });
    const outcome = (step: string) => killed.find((k) => k.killCase.step === step)!;

    test.each(batch)('killed in $step: the turn completes, and the kill landed in that step', ({ step, activity }) => {
      const { turn, stream, pendingAtKill } = outcome(step);
      expect(pendingAtKill).toEqual([{ activity, attempt: 1, started: true }]);
      expect(turn.status).toBe('completed');
      expect(turn.result).not.toBeNull();
      const retries = ofType(stream.events, 'step.retry').map((e) => ({ step: e.data.step, attempt: e.data.attempt }));
      expect(retries).toEqual([{ step, attempt: 2 }]);
    });

    test.each(batch)(
      'killed in $step: the event log is gapless, turn.started once and first, turn.completed once and last, no deterministic event twice',
      ({ step, agents }) => {
        const { turn, stream } = outcome(step);
        const events = stream.events;
        expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
        expect(ofType(events, 'turn.started')).toHaveLength(1);
        expect(events[0].type).toBe('turn.started');
        expect(events.filter((e) => e.type === 'turn.completed' || e.type === 'turn.failed')).toHaveLength(1);
        expect(events.at(-1)!.type).toBe('turn.completed');
        expect((events.at(-1)!.data as { result: unknown }).result).toEqual(turn.result);

        expect(agentsOf(events, 'agent.started')).toEqual(agents);
        expect(agentsOf(events, 'agent.completed')).toEqual(agents);
        const gates = ofType(events, 'validator.gate').map((e) => `${e.data.finding_id}:${e.data.gate}`);
        expect(duplicates(gates)).toEqual([]);
        const critics = ofType(events, 'validator.critic').map((e) => String(e.data.finding_id));
        expect(duplicates(critics)).toEqual([]);
        expect(ofType(events, 'fact_check').length).toBeLessThanOrEqual(1);
        // Deltas of the second attempt only follow its announcement, and name the step it names (the
        // coach's, not its model calls' health_coach.main): a client drops exactly the killed attempt's text.
        const retryId = ofType(events, 'step.retry')[0]?.id ?? Infinity;
        for (const thought of ofType(events, 'agent.thought').filter((e) => e.data.attempt !== 1)) {
          expect(thought.id).toBeGreaterThan(retryId);
          expect(thought.data.step).toBe(step);
        }
      },
    );

    test.each(batch)(
      "killed in $step: the ledger shows the steps finished before the kill not called again, and the killed activity's calls made once, all by attempt 2",
      ({ step, calls }) => {
        const { turn, ledgerAtKill, ledger: rows } = outcome(step);
        // Nothing failed: the hung call died with the worker, unanswered and unbilled.
        expect(rows.filter((r) => r.outcome !== 'success')).toEqual([]);
        expect(ledgerAtKill.every((r) => r.attempt === 1)).toBe(true);
        // Every step that had finished when the worker died has, at the end, exactly the calls it had then.
        const before = countByStep(ledgerAtKill);
        const after = countByStep(rows);
        expect(Object.fromEntries(Object.keys(before).map((finished) => [finished, after[finished]]))).toEqual(before);
        // The killed activity's calls: all on its second attempt, none left over from the first.
        expect(countByStep(rows.filter((r) => r.attempt !== 1))).toEqual(calls);
        expect(rows.filter((r) => r.attempt === 1 && r.step in calls)).toEqual([]);
        const total = rows.reduce((sum, r) => sum + Number(r.costUsd), 0);
        expect(turn.result!.cost_usd).toBeCloseTo(total, 6);
      },
    );
  },
);
