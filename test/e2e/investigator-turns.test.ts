/**
 * The Investigator path end to end (docs/design.md#step-1a-the-investigator, vagueness = high): a vague
 * question gets a briefing built from hypotheses that were computed on the user's rows and validated, with
 * their verdicts; what was tested is remembered (GET /v1/memory lists it with its turn) and not proposed again.
 */
import { turnSchema, type Turn } from '../../contracts/turn';
import { factCheckReply } from '../../checks/fact-check';
import { PLANTED_EFFECTS } from '../../dev/synthetic-data/generate';
import { api, expectSchema } from '../support/http';
import { startDemoService, type DemoService, type TestService } from '../support/service';

jest.setTimeout(180_000);

let demo: DemoService;
let svc: TestService;
let user: { userId: string; apiKey: string };
beforeAll(async () => {
  demo = await startDemoService();
  ({ svc, user } = demo);
});
afterAll(async () => {
  await demo?.close();
});

const VAGUE = 'Is anything interesting in my data?';

async function ask(content: string): Promise<Turn> {
  const res = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content }], stream: false },
  });
  return expectSchema(turnSchema, res.body);
}

const plantedIds = PLANTED_EFFECTS.map((e) =>
  e.kind === 'association' ? `inv-association-${e.feature}-${e.target}` : `inv-trend-${e.feature}`,
);

let first: Turn;

test('a vague question gets a briefing whose auto-tested findings carry verdicts, a planted effect validated', async () => {
  first = await ask(VAGUE);
  expect(first.status).toBe('completed');
  const { answer, fact_sheet, agents_used, validator } = first.result!;
  expect(agents_used).toEqual(['investigator']);
  expect(validator.findings_total).toBe(3);
  expect(answer).toContain('Auto-tested findings');
  expect(answer).toMatch(/✓/);
  const validatedIds = new Set(fact_sheet.filter((e) => !e.verdict).map((e) => e.claim.split('.')[0]));
  expect(plantedIds.some((id) => validatedIds.has(id))).toBe(true);
  // Every number in the briefing traces to its Fact Sheet.
  const sheet = Object.fromEntries(fact_sheet.map((e) => [e.claim, e.value]));
  expect(factCheckReply(answer, sheet, VAGUE)).toEqual([]);
});

test('what was tested is in memory, listed by GET /v1/memory with its source turn', async () => {
  const res = await api(svc.url, 'GET', '/v1/memory?include=tested_hypothesis&limit=100', { key: user.apiKey });
  expect(res.status).toBe(200);
  const tested = res.body.data.filter((m: { category: string }) => m.category === 'tested_hypothesis');
  expect(tested).toHaveLength(3);
  for (const entry of tested) {
    expect(entry.source_turn_id).toBe(first.id);
    expect(entry.meta.finding_id).toMatch(/^inv-/);
  }
  const byDefault = await api(svc.url, 'GET', '/v1/memory', { key: user.apiKey });
  expect(byDefault.body.data.some((m: { category: string }) => m.category === 'tested_hypothesis')).toBe(false);
});

test('a second vague turn does not propose a tested hypothesis again', async () => {
  const firstIds = new Set(first.result!.fact_sheet.map((e) => e.claim.split('.')[0]).concat(await testedIds()));
  svc.scripted.requests.clear();
  const second = await ask(VAGUE);
  expect(second.status).toBe('completed');
  // Memory is in the Investigator's own prompt too, tested hypotheses with their verdicts.
  const proposer = svc.scripted.requests.entries().find((r) => r.step === 'investigator_hypotheses');
  expect(proposer?.system).toMatch(/## Tested hypotheses[\s\S]*\[validated\]/);
  const gateFindings = await svc.database.db.turnEvent.findMany({
    where: { turnId: second.id, type: 'validator.gate' },
    select: { data: true },
  });
  const secondIds = new Set(gateFindings.map((e) => (e.data as { finding_id: string }).finding_id));
  expect(secondIds.size).toBeGreaterThan(0);
  for (const id of secondIds) expect(firstIds.has(id)).toBe(false);
  // Memory holds each hypothesis once.
  const all = await testedIds();
  expect(new Set(all).size).toBe(all.length);
});

async function testedIds(): Promise<string[]> {
  const rows = await svc.database.db.memoryEntry.findMany({
    where: { userId: user.userId, category: 'tested_hypothesis' },
    select: { meta: true },
  });
  return rows.map((r) => (r.meta as { finding_id: string }).finding_id);
}
