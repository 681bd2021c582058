/**
 * `context.include_biomarkers: false` keeps the user's lab values out of the whole turn
 * (docs/design.md#lab-results-left-out-of-a-turn): not only out of the Domain Expert's profile tool, but out of
 * every request the model receives (Data Science's plan, code, summary and findings, the coach, the Critic,
 * synthesis, the Investigator, the memory extractor), out of the data handed to the sandbox, and out of the
 * memory a turn is given. A question about their labs gets an honest answer that the labs were left out at the
 * user's request. The same questions with the flag on show the detector finds lab values where they are used.
 * Real Temporal, Postgres, sandbox and gates; the scripted model through the real Anthropic SDK, whose request
 * log is what the model received.
 */
import { Amy, type Turn } from '@amy/sdk';
import { testedHypothesis } from '../../activities/steps/memory';
import type { ValidatedFinding } from '../../activities/steps/run-gates';
import { seedDemoHealthData } from '../../dev/synthetic-data/demo-user';
import { formatIsoDate } from '../../contracts/health-records';
import { newId } from '../../platform/ids';
import { memorySummary, recordTestedHypotheses } from '../../platform/memory';
import { startTestService, type TestService } from '../support/service';

jest.setTimeout(300_000);

let svc: TestService;
let amy: Amy;
let userId: string;

const day = (back: number) => formatIsoDate(new Date(Date.now() - back * 86_400_000));

/**
 * The user's lab results: values with two decimals that nothing else in the demo history produces, so a
 * request that holds one holds a lab value.
 */
const LABS = [
  { date: day(200), biomarker: 'ldl_cholesterol', value: 158.62, unit: 'mg/dL' },
  { date: day(30), biomarker: 'ldl_cholesterol', value: 147.38, unit: 'mg/dL' },
  { date: day(30), biomarker: 'hdl_cholesterol', value: 43.71, unit: 'mg/dL' },
  { date: day(30), biomarker: 'triglycerides', value: 171.29, unit: 'mg/dL' },
  { date: day(30), biomarker: 'hba1c', value: 5.87, unit: '%' },
  { date: day(30), biomarker: 'vitamin_d', value: 27.53, unit: 'ng/mL' },
] as const;

/** The lab numbers a request must not hold: the values, and the change between the two LDL panels. */
const LAB_NUMBERS = [...LABS.map((lab) => lab.value), Number((147.38 - 158.62).toFixed(2))];

/** Questions about the user's own labs: Data Science (a latest value, a change across panels) and the Domain Expert. */
const LAB_QUESTIONS = [
  'What was my latest LDL cholesterol?',
  'Is my LDL cholesterol getting better?',
  'Is my LDL cholesterol something to worry about?',
];
/** The other paths a lab value could take into a request: the coach on the user's data, the Investigator. */
const OTHER_QUESTIONS = [
  'Using my data, how can I get my bedtime more regular?',
  'Is there anything interesting in my data?',
];

beforeAll(async () => {
  svc = await startTestService();
  const user = await svc.createUser();
  userId = user.userId;
  amy = new Amy({ apiKey: user.apiKey, baseUrl: svc.url });
  await seedDemoHealthData(svc.database.pool, userId);
  await svc.database.pool.query('DELETE FROM lab_biomarkers WHERE user_id = $1', [userId]);
  await amy.data.labs.upsert(LABS.map((lab) => ({ ...lab })));
});
afterAll(async () => {
  await svc?.close();
});

const ask = (question: string, includeBiomarkers: boolean): Promise<Turn> =>
  amy.turns.create({
    messages: [{ role: 'user', content: question }],
    stream: false,
    context: { include_biomarkers: includeBiomarkers },
  });

/**
 * The lab numbers `text` states, sign aside: each number in it with two decimals or more (147.38, or a
 * difference with float noise, -11.240000000000009) that is one of them.
 */
function labValuesIn(text: string): number[] {
  const numbers = [...text.matchAll(/\d+\.\d{2,}/g)].map((match) => Number(match[0]));
  return LAB_NUMBERS.filter((value) => numbers.some((n) => Math.abs(n - Math.abs(value)) < 0.005));
}

/** Each model request since the log was cleared: its call id and the lab values anywhere in it. */
function labValuesInRequests(): Array<{ step: string | null; values: number[] }> {
  return svc.scripted.requests.entries().map((request) => ({
    step: request.step,
    values: labValuesIn(JSON.stringify({ system: request.system, messages: request.messages, inputs: request.inputs })),
  }));
}

const snapshotLabs = async (turnId: string) =>
  (
    await svc.database.pool.query<{ labs: unknown[] }>('SELECT labs FROM turn_data_snapshots WHERE turn_id = $1', [
      turnId,
    ])
  ).rows[0]?.labs;

describe('with the flag on, lab values reach the model where the turn uses them', () => {
  test.each(LAB_QUESTIONS)('%s', async (question) => {
    svc.scripted.requests.clear();
    const turn = await ask(question, true);
    expect(turn.status).toBe('completed');
    expect(labValuesInRequests().flatMap((r) => r.values)).toContain(147.38);
  });
});

/** What memory holds about LDL cholesterol, in the order it was written. */
const ldlEntries = async () =>
  (
    await svc.database.pool.query<{ id: string; verdict: string; effect: number | null }>(
      `SELECT id, meta->>'verdict' AS verdict, (meta->>'effect')::float8 AS effect FROM memory_entries
       WHERE user_id = $1 AND meta->>'feature' = 'ldl_cholesterol' ORDER BY created_at, id`,
      [userId],
    )
  ).rows;

describe('with include_biomarkers: false, no lab value reaches any model request', () => {
  const turns: Turn[] = [];
  const steps = new Set<string>();
  /** Memory about LDL before the turns without labs: theirs to leave as it is. */
  let ldlBefore: Awaited<ReturnType<typeof ldlEntries>>;

  beforeAll(async () => {
    // What validation remembers of "Is my LDL getting better?" when it computes the change across panels: an
    // entry whose effect is that change. A turn with the labs in is given it in its memory summary.
    const change = LAB_NUMBERS[LAB_NUMBERS.length - 1];
    const finding = {
      id: 'ds-001',
      claim: 'LDL cholesterol at the latest panel against the previous one and the first over all available days',
      kind: 'scalar',
      feature: 'ldl_cholesterol',
      target: null,
      numbers: { latest: 147.38, previous: 158.62, change, first: 158.62 },
      n: 2,
      window: 'all available days',
    };
    const validated = {
      finding,
      source: 'data_science',
      verdict: 'validated',
      gates: { verdict: 'validated', fact: true },
    };
    await recordTestedHypotheses(svc.database.pool, {
      userId,
      turnId: newId('turn'),
      entries: [testedHypothesis(validated as unknown as ValidatedFinding)],
    });
    expect(labValuesIn(await memorySummary(svc.database.pool, userId))).toContain(change);
    ldlBefore = await ldlEntries();
    expect(ldlBefore.at(-1)).toMatchObject({ verdict: 'validated', effect: change });
  });

  test.each([...LAB_QUESTIONS, ...OTHER_QUESTIONS])('%s', async (question) => {
    svc.scripted.requests.clear();
    const turn = await ask(question, false);
    expect(turn.status).toBe('completed');
    const requests = labValuesInRequests();
    for (const { step } of requests) if (step) steps.add(step);
    expect(requests.filter((r) => r.values.length > 0)).toEqual([]);
    expect(labValuesIn(turn.result!.answer)).toEqual([]);
    turns.push(turn);
  });

  test('the turns went through every agent, the Critic, synthesis and the memory extractor', () => {
    for (const step of [
      'ds_plan',
      'ds_code',
      'ds_summary',
      'domain_expert',
      'health_coach.main',
      'investigator_hypotheses',
    ]) {
      expect(steps).toContain(step);
    }
    for (const step of ['critic', 'synthesis', 'memory']) expect(steps).toContain(step);
  });

  test('the snapshot each turn computed over, the sandbox’s input, holds no lab results, and says why', async () => {
    for (const turn of turns) {
      expect(turn.data_snapshot).toMatchObject({ lab_results: 0, lab_results_withheld: true });
      expect(await snapshotLabs(turn.id)).toEqual([]);
    }
  });

  test('nothing is computed from the labs left out: no finding to judge, and what memory knew of them stands', async () => {
    for (const turn of turns.slice(0, LAB_QUESTIONS.length)) {
      expect(turn.result!.validator.findings_total).toBe(0);
    }
    // Memory keeps every test (the turns with the labs in wrote theirs too); the turns without wrote nothing about
    // LDL and changed nothing of what was there.
    expect(await ldlEntries()).toEqual(ldlBefore);
  });

  test('a question about their labs is answered honestly: the labs were left out at their request', () => {
    for (const turn of turns.slice(0, LAB_QUESTIONS.length)) {
      expect(turn.result!.answer).toMatch(/left out of this turn at your request/);
      expect(turn.result!.answer).not.toMatch(/no lab results uploaded/);
    }
  });
});
