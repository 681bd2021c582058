/**
 * A new user's own data in the checked path, through the SDK only (docs/design.md#every-table-in-the-checked-path):
 * the user stores daily rows, workouts and lab results (one LDL in mmol/L, one in a FHIR bundle), then asks
 * about each table. Every answer's numbers are the ones this test computes from exactly those rows; each
 * is reproduced by the reproduction gate (its `validator.gate` event, read from the SDK's stream) and
 * validated; the finding's series (amy.turns.findingSeries) holds those rows. A changed day changes the
 * next turn's number. Real Temporal, Postgres, sandbox and gates, the scripted model and the built SDK.
 */
import { Amy, type TurnStreamEvent, type Turn } from '@amy/sdk';
import { formatIsoDate } from '../../contracts/health-records';
import { withinTolerance } from '../../contracts/fact-tolerance';
import { startTestService, type TestService } from '../support/service';

jest.setTimeout(240_000);

const DAY_MS = 86_400_000;
/** The last day of the user's data: a fixed past day, so that "in October" and "this year" always name the same days. */
const LAST = new Date('2026-11-20T00:00:00Z');
/** A day counted back from the last day of the user's data. */
const day = (back: number) => formatIsoDate(new Date(LAST.getTime() - back * DAY_MS));
const LAST_DAY = day(0);
const YEAR = LAST.getUTCFullYear();
const OCTOBER_YEAR = YEAR;

let svc: TestService;
let amy: Amy;

/** 120 days of rows whose resting heart rate, steps, sleep and sleep score vary from day to day. */
const DAILY = Array.from({ length: 120 }, (_, i) => ({
  date: day(119 - i),
  resting_heart_rate: 58 + ((i * 7) % 9),
  steps: 6000 + ((i * 1379) % 5000),
  sleep_minutes: 400 + ((i * 37) % 80),
  sleep_score: 70 + ((i * 13) % 20),
}));

/** Runs, rides and yoga spread over the last 120 days, some of them in October. */
const WORKOUTS = [
  ...[3, 9, 16, 24, 33, 41, 52, 63, 71, 80, 95, 110].map((back, i) => ({
    external_id: `run-${i}`,
    date: day(back),
    type: 'running' as const,
    duration_minutes: 25 + ((i * 11) % 40),
    distance_km: Number((4 + ((i * 3) % 9) * 0.7).toFixed(1)),
  })),
  ...[5, 12, 30, 45, 60].map((back, i) => ({
    external_id: `ride-${i}`,
    date: day(back),
    type: 'cycling' as const,
    duration_minutes: 60 + i * 5,
    distance_km: 20 + i,
  })),
  ...[7, 21, 35].map((back, i) => ({
    external_id: `yoga-${i}`,
    date: day(back),
    type: 'yoga' as const,
    duration_minutes: 45,
  })),
];

const LDL_MMOL = 3.36;
/** The LDL panels: one in mmol/L through the rows, the latest as a FHIR bundle in mg/dL. */
const LABS = { first: { date: day(300), value: 150 }, mmol: { date: day(150) }, fhir: { date: day(20), value: 118 } };

async function ask(question: string): Promise<{ turn: Turn; events: TurnStreamEvent[] }> {
  const created = await amy.turns.create({ messages: [{ role: 'user', content: question }] });
  const events: TurnStreamEvent[] = [];
  for await (const event of amy.turns.stream(created.id)) events.push(event);
  return { turn: await amy.turns.get(created.id), events };
}

/** The fact sheet's value for a finding number (`ds-001.count`), or undefined. */
const fact = (turn: Turn, claim: string) => turn.result?.fact_sheet.find((f) => f.claim === claim)?.value;

/** The reproduction gate's verdicts in the turn's stream. */
function reproductions(events: TurnStreamEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'validator.gate' && e.gate === 'reproduction' ? [e.verdict] : []));
}

function expectCheckedNumber(turn: Turn, events: TurnStreamEvent[], claim: string, expected: number) {
  expect(turn.status).toBe('completed');
  const value = fact(turn, claim);
  expect({ claim, value, close: value !== undefined && withinTolerance(value, expected) }).toEqual({
    claim,
    value: expect.any(Number),
    close: true,
  });
  expect(reproductions(events)).toEqual(['passed']);
  expect(turn.result!.validator.findings_validated).toBeGreaterThanOrEqual(1);
}

beforeAll(async () => {
  svc = await startTestService();
  const user = await svc.createUser();
  amy = new Amy({ apiKey: user.apiKey, baseUrl: svc.url });
  await amy.data.daily.upsert(DAILY);
  await amy.data.workouts.upsert(WORKOUTS);
  await amy.data.labs.upsert([
    { date: LABS.first.date, biomarker: 'ldl_cholesterol', value: LABS.first.value, unit: 'mg/dL' },
    { date: LABS.mmol.date, biomarker: 'ldl_cholesterol', value: LDL_MMOL, unit: 'mmol/L' },
  ]);
  await amy.data.labs.upsert({
    resourceType: 'Bundle',
    type: 'collection',
    entry: [
      {
        resource: {
          resourceType: 'Observation',
          status: 'final',
          code: { coding: [{ system: 'http://loinc.org', code: '13457-7' }] },
          valueQuantity: { value: LABS.fhir.value, unit: 'mg/dL', system: 'http://unitsofmeasure.org', code: 'mg/dL' },
          effectiveDateTime: `${LABS.fhir.date}T08:30:00Z`,
        },
      },
    ],
  });
});

afterAll(async () => {
  await svc?.close();
});

test('workouts: "How many workouts did I do in October?" counts exactly the stored October workouts', async () => {
  const october = WORKOUTS.filter((w) => w.date.startsWith(`${OCTOBER_YEAR}-10-`) && w.date <= LAST_DAY);
  const { turn, events } = await ask('How many workouts did I do in October?');
  expectCheckedNumber(turn, events, 'ds-001.count', october.length);
  expect(turn.result!.answer).toContain(`October ${OCTOBER_YEAR}`);
});

test('workouts: "What was my longest run this year?" is the longest stored run since 1 January, with its series', async () => {
  const runs = WORKOUTS.filter((w) => w.type === 'running' && w.date >= `${YEAR}-01-01`);
  const longest = Math.max(...runs.map((r) => r.duration_minutes));
  const { turn, events } = await ask('What was my longest run this year?');
  expectCheckedNumber(turn, events, 'ds-001.max', longest);
  // The chart's series is one point per run, on its day, oldest first.
  const series = await amy.turns.findingSeries(turn.id, 'ds-001');
  const oldestFirst = [...runs].sort((a, b) => a.date.localeCompare(b.date));
  expect(series.points).toEqual(oldestFirst.map((r) => ({ date: r.date, value: r.duration_minutes })));
});

test('labs: "Is my LDL cholesterol getting better?" compares the FHIR panel with the one sent in mmol/L', async () => {
  const previous = (LDL_MMOL * 386.65) / 10; // mmol/L × g/mol ÷ 10 = mg/dL
  const { turn, events } = await ask('Is my LDL cholesterol getting better?');
  expectCheckedNumber(turn, events, 'ds-001.latest', LABS.fhir.value);
  expect(withinTolerance(fact(turn, 'ds-001.previous')!, previous)).toBe(true);
  expect(withinTolerance(fact(turn, 'ds-001.change')!, LABS.fhir.value - previous)).toBe(true);
  expect(fact(turn, 'ds-001.first')).toBe(LABS.first.value);
});

test('daily: a changed day changes the next turn', async () => {
  const question = 'What is my average resting heart rate over the last 30 days?';
  const window = DAILY.slice(-30);
  const mean = (rows: typeof DAILY) => rows.reduce((a, r) => a + r.resting_heart_rate, 0) / rows.length;
  const before = await ask(question);
  expectCheckedNumber(before.turn, before.events, 'ds-001.mean', mean(window));

  const changed = { ...window[window.length - 1], resting_heart_rate: 90 };
  await amy.data.daily.upsert([changed]);
  const after = await ask(question);
  const expected = mean([...window.slice(0, -1), changed]);
  expect(expected).not.toBeCloseTo(mean(window), 1);
  expectCheckedNumber(after.turn, after.events, 'ds-001.mean', expected);
});

test('an association between workouts and a daily metric is judged by the gates on per-day series', async () => {
  const { turn, events } = await ask('Do I sleep better on days when I work out?');
  expect(turn.status).toBe('completed');
  // An inference: reproduced, then judged by the seven gates (whatever they conclude about 120 days).
  expect(reproductions(events)).toEqual(['passed']);
  const gates = events.flatMap((e) => (e.type === 'validator.gate' ? [e.gate] : []));
  expect(gates).toContain('sample_size');
  const series = await amy.turns.findingSeries(turn.id, 'ds-001');
  const workoutDays = new Map<string, number>();
  for (const w of WORKOUTS) workoutDays.set(w.date, (workoutDays.get(w.date) ?? 0) + w.duration_minutes);
  for (const point of series.points) {
    if (!('x' in point)) throw new Error('an association has x and y');
    expect({ date: point.date, x: point.x }).toEqual({ date: point.date, x: workoutDays.get(point.date) ?? 0 });
  }
});
