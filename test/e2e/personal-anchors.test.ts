/**
 * The fact sheet holds only validated entries, as the product contract says ("Every fact sheet entry survived
 * validation"); the Health Coach's personal anchors, numbers our own code computes from the user's rows for the
 * coach to cite, are a field of their own, `result.personal_anchors` (docs/design.md#personal-anchors). The
 * binding fact-check still traces every number of the answer: an anchor the coach quotes traces to that field,
 * so the answer keeps it. A coaching-on-my-data turn on the demo user, through the SDK, with real Temporal,
 * Postgres, sandbox and gates and the scripted model; the anchors are recomputed here from the turn's snapshot.
 */
import { Amy, type Turn, type TurnStreamEvent } from '@amy/sdk';
import { computeAnchors } from '../../activities/agents/health-coach/anchors';
import { checkNumbers } from '../../checks/fact-check';
import { windowEntries, type FactSheet } from '../../checks/fact-sheet';
import type { DailyRow } from '../../contracts/health-records';
import { api } from '../support/http';
import { startDemoService, type DemoService } from '../support/service';

jest.setTimeout(180_000);

const QUESTION = 'Using my data, how can I get my bedtime more regular?';

let demo: DemoService;
let turn: Turn;
let events: TurnStreamEvent[];

beforeAll(async () => {
  demo = await startDemoService();
  const amy = new Amy({ apiKey: demo.user.apiKey, baseUrl: demo.svc.url });
  const created = await amy.turns.create({ messages: [{ role: 'user', content: QUESTION }] });
  events = [];
  for await (const event of amy.turns.stream(created.id)) events.push(event);
  turn = await amy.turns.get(created.id);
});
afterAll(async () => {
  await demo?.close();
});

const ofType = <T extends TurnStreamEvent['type']>(type: T) =>
  events.filter((e): e is Extract<TurnStreamEvent, { type: T }> => e.type === type);

/** What the answer's numbers may trace to, built here from the Turn: its fact sheet, and its anchors with their windows' lengths. */
function citable(result: NonNullable<Turn['result']>): { factSheet: FactSheet; withAnchors: FactSheet } {
  const factSheet: FactSheet = Object.fromEntries(result.fact_sheet.map((e) => [e.claim, e.value]));
  const anchors = (result.personal_anchors ?? []).flatMap((a) => [
    [a.claim, a.value] as const,
    ...windowEntries(a.claim, { source: 'personal_anchor', n: a.n, window: a.window }).map(
      (e) => [e.claim, e.value] as const,
    ),
  ]);
  return { factSheet, withAnchors: { ...factSheet, ...Object.fromEntries(anchors) } };
}

test('the coach, supported by Data Science, answered', () => {
  expect(turn.status).toBe('completed');
  expect(turn.result!.agents_used).toEqual(['data_science', 'health_coach']);
});

test('the fact sheet holds only entries of findings that validation passed', () => {
  const { fact_sheet, validator } = turn.result!;
  expect(fact_sheet.length).toBeGreaterThan(0);
  expect(fact_sheet.filter((e) => e.source === 'personal_anchor' || e.claim.startsWith('anchor.'))).toEqual([]);
  const judged = new Set(ofType('validator.gate').map((e) => e.finding_id));
  const rejectedByCritic = new Set(
    ofType('validator.critic')
      .filter((e) => e.verdict === 'reject')
      .map((e) => e.finding_id),
  );
  const findingOf = (claim: string) => claim.split('.')[0];
  for (const entry of fact_sheet) {
    expect({ claim: entry.claim, source: entry.source }).toEqual({ claim: entry.claim, source: 'data_science' });
    expect(judged).toContain(findingOf(entry.claim));
    expect(rejectedByCritic).not.toContain(findingOf(entry.claim));
  }
  const validatedIds = new Set(fact_sheet.filter((e) => !e.verdict).map((e) => findingOf(e.claim)));
  const conditionalIds = new Set(fact_sheet.filter((e) => e.verdict).map((e) => findingOf(e.claim)));
  expect(validatedIds.size).toBeLessThanOrEqual(validator.findings_validated);
  expect(conditionalIds.size).toBeLessThanOrEqual(validator.findings_conditional);
});

test('the anchors are result.personal_anchors: the ones our code computes from the turn’s snapshot', async () => {
  const { rows } = await demo.pool.query<{ daily: DailyRow[] }>(
    'SELECT daily FROM turn_data_snapshots WHERE turn_id = $1',
    [turn.id],
  );
  const expected = computeAnchors(rows[0].daily).map((a) => ({
    claim: `anchor.${a.key}`,
    label: a.label,
    value: a.value,
    unit: a.unit,
    n: a.n,
    window: a.window,
  }));
  expect(expected.length).toBeGreaterThan(0);
  expect(turn.result!.personal_anchors).toEqual(expected);
  // The stream's terminal event carries the same result.
  expect(ofType('turn.completed')[0].result.personal_anchors).toEqual(expected);
});

test('every number of the answer traces, the coach’s anchor to personal_anchors, and the check kept it', () => {
  const result = turn.result!;
  const { factSheet, withAnchors } = citable(result);
  expect(checkNumbers(result.answer, { sheet: withAnchors, userMessage: QUESTION }).untraced).toEqual([]);
  // The anchor the coach quoted is in the answer, and only the anchors account for it.
  const onlyAnchors = checkNumbers(result.answer, { sheet: factSheet, userMessage: QUESTION }).untraced;
  expect(onlyAnchors.length).toBeGreaterThan(0);
  expect(result.fact_check).toMatchObject({ issues: [], repairs: { removed: [] } });
});

test('the OpenAPI document describes personal_anchors on the Turn’s result', async () => {
  const doc = (await api(demo.svc.url, 'GET', '/openapi.json')).body as unknown;
  const found: Array<Record<string, unknown>> = [];
  const visit = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      const properties = (node as { properties?: Record<string, unknown> }).properties;
      if (properties && 'personal_anchors' in properties && 'fact_sheet' in properties) {
        found.push(properties.personal_anchors as Record<string, unknown>);
      }
      Object.values(node).forEach(visit);
    }
  };
  visit((doc as { paths: Record<string, unknown> }).paths['/v1/turns/{id}']);
  expect(found.length).toBeGreaterThan(0);
  for (const schema of found) {
    expect(schema.description).toMatch(/personal anchor/i);
    expect((schema.items as { required?: string[] }).required).toEqual(
      expect.arrayContaining(['claim', 'label', 'value', 'unit', 'n', 'window']),
    );
  }
});
