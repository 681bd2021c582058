/**
 * What a turn that says `include_biomarkers: false` reads of memory (docs/design.md#lab-results-left-out-of-a-turn),
 * on a real Postgres: what validation remembered about a lab biomarker (its text and effect are the user's lab
 * values) is left out of the injected summary and of the Investigator's tested hypotheses; everything else is read
 * as usual, and a turn with the labs in reads it all.
 */
import { newId } from '../../platform/ids';
import {
  createUserMemory,
  memorySummary,
  recordTestedHypotheses,
  testedHypothesisEntries,
} from '../../platform/memory';
import { createUserWithApiKey } from '../../platform/users';
import { testedHypothesis } from '../../activities/steps/memory';
import type { ValidatedFinding } from '../../activities/steps/run-gates';
import { createTestDatabase, type TestDatabase } from '../support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

const validated = (finding: Partial<ValidatedFinding['finding']>, fact: boolean) =>
  ({
    finding: { kind: 'scalar', target: null, n: 3, window: 'the last 365 days', ...finding },
    windowDays: 365,
    source: 'data_science',
    verdict: 'validated',
    gates: { verdict: 'validated', fact },
    critic: null,
    assessment: null,
  }) as ValidatedFinding;

const LDL = validated(
  {
    id: 'ds-001',
    claim: 'LDL cholesterol at the latest panel against the previous one: 147.38 mg/dL, down from 158.62',
    feature: 'ldl_cholesterol',
    numbers: { latest: 147.38, previous: 158.62, change: -11.24 },
  },
  true,
);
const SLEEP_AND_GLUCOSE = validated(
  {
    id: 'ds-002',
    kind: 'association',
    claim: 'Shorter sleep on the days before a higher fasting glucose',
    feature: 'sleep_minutes',
    target: 'fasting_glucose',
    numbers: { rho: -0.41, n: 3 },
  },
  false,
);
const STEPS = validated(
  { id: 'ds-003', claim: 'Average steps over the last 30 days', feature: 'steps', numbers: { mean: 8123.4 } },
  true,
);

let userId: string;
beforeAll(async () => {
  userId = (await createUserWithApiKey(t.pool, `l_${Math.random().toString(36).slice(2, 10)}`)).user.id;
  await recordTestedHypotheses(t.pool, {
    userId,
    turnId: newId('turn'),
    entries: [LDL, SLEEP_AND_GLUCOSE, STEPS].map(testedHypothesis),
  });
  await createUserMemory(t.pool, userId, { category: 'goal', text: 'Sleep 8 hours.', confidence: 1, meta: null });
});

test('with the labs in, the summary and the tested hypotheses hold every entry', async () => {
  const summary = await memorySummary(t.pool, userId);
  for (const text of ['147.38', 'fasting glucose', 'Average steps', 'Sleep 8 hours.']) expect(summary).toContain(text);
  expect(await testedHypothesisEntries(t.pool, userId)).toHaveLength(3);
});

test('without the labs, an entry about a lab biomarker, as feature or target, is left out; the rest is read', async () => {
  const summary = await memorySummary(t.pool, userId, { withoutLabs: true });
  for (const text of ['147.38', '158.62', '11.24', 'LDL', 'fasting glucose']) expect(summary).not.toContain(text);
  for (const text of ['Average steps', 'Sleep 8 hours.']) expect(summary).toContain(text);
  const tested = await testedHypothesisEntries(t.pool, userId, { withoutLabs: true });
  expect(tested.map((entry) => entry.text)).toEqual([STEPS.finding.claim]);
});
