/**
 * Memory injection (docs/design.md#injection), on the whole service: the summary is read once, at the start
 * of the turn, and every model call of every kind of turn (classifier, router, rephrase, the fallback, each
 * Data Science stage, the Domain Expert, the coach's modules, reflection, the Critic, the Assessment,
 * synthesis, the Investigator) has that same snapshot at the top of its system prompt; the extractor is
 * shown the same snapshot as what is already remembered. An entry written while the turn runs reaches no
 * prompt of that turn, the Critic's and the extractor's included, and reaches the next turn's.
 */
import { MODEL_CALL_IDS, type ModelCallId } from '../../contracts/steps';
import { turnSchema, type Turn } from '../../contracts/turn';
import { PLANTED_EFFECTS } from '../../dev/synthetic-data/generate';
import { scriptedRules } from '../../dev/scripted-model/rules';
import type { LoggedRequest } from '../../dev/scripted-model/request-log';
import { MEMORY_HEADING } from '../../activities/runtime/memory-injection';
import { memorySummary } from '../../platform/memory';
import { newId } from '../../platform/ids';
import { api, expectSchema } from '../support/http';
import { startDemoService, type DemoService } from '../support/service';

jest.setTimeout(300_000);

let demo: DemoService;
beforeAll(async () => {
  // Broken code first, so every Data Science run goes through a debug rewrite (ds_debug) too.
  demo = await startDemoService({ scripted: { rules: scriptedRules({ brokenCode: 'first' }) } });
  for (const entry of [
    { category: 'preference', text: "I'm vegetarian and I only work out in the mornings." },
    { category: 'goal', text: 'Lift deep sleep by 15 minutes over the next 6 weeks.' },
  ]) {
    const res = await api(demo.svc.url, 'POST', '/v1/memory', { key: demo.user.apiKey, body: entry });
    expect(res.status).toBe(201);
  }
});
afterAll(async () => {
  await demo?.close();
});

/** What a turn's request may add: its context, or an `interaction` that lets it ask back. */
type TurnOptions = { context?: { include_memory: boolean }; interaction?: { accepts: ['clarification'] } };

async function ask(content: string, options: TurnOptions = {}): Promise<Turn> {
  const res = await api(demo.svc.url, 'POST', '/v1/turns', {
    key: demo.user.apiKey,
    body: { messages: [{ role: 'user', content }], stream: false, ...options },
  });
  return expectSchema(turnSchema, res.body);
}

/** Runs a turn and returns what the model was asked during it, with the memory summary as it stood before. */
async function askLogged(
  content: string,
  options: TurnOptions = {},
): Promise<{ turn: Turn; requests: LoggedRequest[]; before: string }> {
  const before = await memorySummary(demo.pool, demo.user.userId);
  demo.svc.scripted.requests.clear();
  const turn = await ask(content, options);
  expect(turn.status).toBe('completed');
  return { turn, requests: demo.svc.scripted.requests.entries(), before };
}

const memoryBlock = (summary: string) => `${MEMORY_HEADING}\n${summary}\n\n`;
const extractorPrompt = (requests: LoggedRequest[]) =>
  JSON.stringify(requests.filter((r) => r.step === 'memory').map((r) => r.messages));

const planted = PLANTED_EFFECTS.find((e) => e.kind === 'association')!;
const readable = (column: string) => column.replace(/_/g, ' ');

/**
 * One turn of each kind: the fallback, the six collaboration patterns, reflection, validation, the Investigator,
 * and a turn that may ask back (its question is clear, so it asks nothing).
 */
const TURNS: Array<[string, string, TurnOptions?]> = [
  ['the conversational fallback', 'Thanks!'],
  ['1. the Domain Expert alone', 'What is heart rate variability?'],
  ['2. Data Science alone', 'What is my average resting heart rate over the last 90 days?'],
  ['3. Data Science supports the Domain Expert', 'Is an LDL of 124 something to worry about?'],
  [
    '4. the Health Coach alone, closing the conversation',
    'Can you give me some tips for building a morning routine? Thanks, that is all.',
  ],
  ['5. Data Science supports the coach', 'Help me plan better deep sleep based on my data'],
  [
    '6. Data Science and the Domain Expert, then the coach',
    'Help me improve my resting heart rate given my thyroid condition',
  ],
  [
    'reflection with a follow-up',
    'My resting heart rate is 70, is that something to worry about? Please double-check it against my data.',
  ],
  [
    'an association the Critic and the Assessment judge',
    `Are my ${readable(planted.feature)} related to my ${readable(planted.target!)}?`,
  ],
  ['the Investigator', 'Is anything interesting in my data?'],
  [
    'a turn that may ask what a question means',
    'What is my average resting heart rate over the last 90 days?',
    { interaction: { accepts: ['clarification'] } },
  ],
];

describe('every model call of a turn starts with the memory read at its start', () => {
  const seen = new Set<string>();

  // A rest parameter: rows without options must not make jest pass a `done` callback in their place.
  test.each(TURNS)('%s', async (...[, question, options]) => {
    const { requests, before } = await askLogged(question, options);
    expect(before).toContain('vegetarian');
    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) {
      seen.add(request.step ?? '');
      if (request.step === 'memory') continue;
      expect({ step: request.step, system: request.system.slice(0, memoryBlock(before).length) }).toEqual({
        step: request.step,
        system: memoryBlock(before),
      });
      // Once, at the top: not repeated further down.
      expect(request.system.split(MEMORY_HEADING)).toHaveLength(2);
    }
    // The extractor is shown that same snapshot as what it must not write again.
    expect(extractorPrompt(requests)).toContain(JSON.stringify(before).slice(1, -1));
  });

  test('the turns above made every kind of model call', () => {
    const unseen = MODEL_CALL_IDS.filter((call: ModelCallId) => !seen.has(call));
    expect(unseen).toEqual([]);
  });
});

test('include_memory: false keeps memory out of every prompt of the turn, the extractor’s included', async () => {
  for (const question of [TURNS[0][1], TURNS[6][1], TURNS[8][1], TURNS[9][1]]) {
    const { requests } = await askLogged(question, { context: { include_memory: false } });
    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) {
      const prompt = JSON.stringify([request.system, request.messages]);
      expect({ step: request.step, vegetarian: prompt.includes('vegetarian') }).toEqual({
        step: request.step,
        vegetarian: false,
      });
      expect(prompt).not.toContain(MEMORY_HEADING);
      expect(prompt).not.toContain('ALREADY REMEMBERED');
    }
  }
});

describe('memory is read once per turn', () => {
  const MARKER = 'I work night shifts on weekends (written mid-turn).';

  /**
   * A trigger writes an entry for the turn's user when its first agent starts: after the turn read its
   * memory, before any agent, the Critic or the extractor runs. Deterministic, with no timing involved.
   */
  async function writeWhenTheFirstAgentStarts(entryId: string) {
    await demo.pool.query(`
      CREATE OR REPLACE FUNCTION test_write_memory_mid_turn() RETURNS trigger AS $$
      BEGIN
        IF NEW.type = 'agent.started' AND NOT EXISTS (SELECT 1 FROM memory_entries WHERE text = '${MARKER}') THEN
          INSERT INTO memory_entries (id, user_id, category, text, confidence, meta)
          SELECT '${entryId}', user_id, 'preference', '${MARKER}', 1, NULL FROM turns WHERE id = NEW.turn_id;
        END IF;
        RETURN NEW;
      END $$ LANGUAGE plpgsql;
      DROP TRIGGER IF EXISTS test_write_memory_mid_turn ON turn_events;
      CREATE TRIGGER test_write_memory_mid_turn AFTER INSERT ON turn_events
        FOR EACH ROW EXECUTE FUNCTION test_write_memory_mid_turn();
    `);
  }
  afterAll(async () => {
    await demo.pool.query('DROP TRIGGER IF EXISTS test_write_memory_mid_turn ON turn_events');
  });

  test('an entry written while the turn runs reaches none of its prompts, not the Critic’s nor the extractor’s', async () => {
    await writeWhenTheFirstAgentStarts(newId('memory'));
    const { turn, requests, before } = await askLogged(TURNS[8][1]);
    const written = await demo.pool.query('SELECT 1 FROM memory_entries WHERE text = $1', [MARKER]);
    expect(written.rowCount).toBe(1);
    expect(turn.result!.validator.findings_total).toBeGreaterThan(0);
    const steps = requests.map((r) => r.step);
    expect(steps).toEqual(expect.arrayContaining(['critic', 'assessment', 'synthesis', 'memory']));
    for (const request of requests) {
      expect({
        step: request.step,
        marker: JSON.stringify([request.system, request.messages]).includes(MARKER),
      }).toEqual({
        step: request.step,
        marker: false,
      });
    }
    expect(extractorPrompt(requests)).toContain(JSON.stringify(before).slice(1, -1));

    // The next turn reads it, at the top of every prompt.
    await demo.pool.query('DROP TRIGGER IF EXISTS test_write_memory_mid_turn ON turn_events');
    const next = await askLogged(TURNS[8][1]);
    for (const request of next.requests.filter((r) => r.step !== 'memory')) {
      expect(request.system.startsWith(memoryBlock(next.before))).toBe(true);
      expect(request.system).toContain(MARKER);
    }
  });
});
