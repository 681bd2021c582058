/**
 * The binding fact-check end to end, through the HTTP API and the SDK on the demo user:
 *
 * - the scripted model states only numbers that trace: every example question of the README (and
 *   the fallback's) completes with nothing for the check to repair, so a repair in a test below is
 *   the check at work, not a rule that cites what it was not given;
 * - a synthesis that states a number in no reference (`untracedNumber`) is stopped at that sentence and
 *   written on from what went out (`first`), or has the sentence left out of the repair too (`always`);
 *   either way no delta of the stream ever carries the untraced number, the synthesis channel's deltas
 *   concatenated are exactly the completed answer (the contract's append-only deltas: nothing to discard),
 *   and the Turn's `result.fact_check` says what happened.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Amy, type TurnResult } from '@amy/sdk';
import { checkNumbers } from '../../checks/fact-check';
import { turnSchema } from '../../contracts/turn';
import { scriptedRules } from '../../dev/scripted-model/rules';
import { api, expectSchema } from '../support/http';
import { startDemoService, type DemoService } from '../support/service';

jest.setTimeout(240_000);

/** The example questions of the README's "What to ask" table. */
function readmeQuestions(): string[] {
  const readme = readFileSync(path.join(__dirname, '../../README.md'), 'utf8');
  const section = readme.split('### What to ask')[1]?.split(/\n#{2,3} /)[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !/^\| (pattern|-)/.test(line))
    .flatMap((line) => [...(line.split('|')[3] ?? '').matchAll(/"([^"]+)"/g)].map((m) => m[1]));
}

async function askBlocking(demo: DemoService, content: string): Promise<TurnResult> {
  const res = await api(demo.svc.url, 'POST', '/v1/turns', {
    key: demo.user.apiKey,
    body: { messages: [{ role: 'user', content }], stream: false },
  });
  expect(res.status).toBe(200);
  const turn = expectSchema(turnSchema, res.body);
  expect(turn.status).toBe('completed');
  return turn.result!;
}

describe('the scripted model states only numbers that trace', () => {
  let demo: DemoService;
  beforeAll(async () => {
    demo = await startDemoService();
  });
  afterAll(async () => {
    await demo?.close();
  });

  // The README's examples, and questions whose answers cite the coach's anchors or a short window.
  const questions = [
    ...readmeQuestions(),
    'Is an LDL of 124 something to worry about?',
    'Help me plan better deep sleep based on my data',
    'Help me improve my resting heart rate given my thyroid condition',
    'What is my average steps over the last 30 days?',
    'How did I sleep last week?',
    'Are my active zone minutes related to my deep sleep minutes?',
  ];

  test("/openapi.json documents the Turn's result.fact_check", async () => {
    const doc = (await api(demo.svc.url, 'GET', '/openapi.json')).body;
    const result =
      doc.paths['/v1/turns/{id}'].get.responses['200'].content['application/json'].schema.properties.result;
    const factCheck = result.properties.fact_check;
    expect(factCheck.description).toMatch(/fact-check/);
    expect(Object.keys(factCheck.properties).sort()).toEqual(['issues', 'numbers_checked', 'repairs']);
    expect(Object.keys(factCheck.properties.repairs.properties).sort()).toEqual(['removed', 'resynthesised']);
    expect(result.required).not.toContain('fact_check');
  });

  test('the README has example questions to ask', () => {
    expect(questions.length).toBeGreaterThan(10);
  });

  test.each(questions)('"%s": the check finds nothing to repair', async (question) => {
    const result = await askBlocking(demo, question);
    expect(result.fact_check).toMatchObject({ issues: [], repairs: { resynthesised: false, removed: [] } });
    // Nothing was repaired, so the count is the answer's own: every quantity in it was read.
    const read = checkNumbers(result.answer, { sheet: {}, userMessage: '' }).checked;
    expect(result.fact_check!.numbers_checked).toBe(read.length);
    expect(result.answer.trim()).not.toBe('');
  });
});

describe.each([
  ['first', { resynthesised: true, removedCount: 0 }],
  ['always', { resynthesised: true, removedCount: 1 }],
] as const)('a synthesis that states an untraced number (%s)', (mode, expected) => {
  let demo: DemoService;
  beforeAll(async () => {
    demo = await startDemoService({ scripted: { rules: scriptedRules({ untracedNumber: mode }) } });
  });
  afterAll(async () => {
    await demo?.close();
  });

  const QUESTION = 'What is my average resting heart rate over the last 90 days?';

  test('no delta ever carries the untraced number, and the synthesis deltas concatenated are the completed answer', async () => {
    const amy = new Amy({ apiKey: demo.user.apiKey, baseUrl: demo.svc.url });
    const turn = await amy.turns.create({ messages: [{ role: 'user', content: QUESTION }] });
    const stream = amy.turns.stream(turn.id);
    const retries: string[] = [];
    let shown = '';
    for await (const event of stream) {
      if (event.type === 'step.retry') retries.push(event.reason);
      if (event.type === 'agent.thought' && event.agent === 'synthesis') shown += event.delta;
    }
    const result = (await amy.turns.get(turn.id)).result!;

    const sheet = Object.fromEntries(result.fact_sheet.map((e) => [e.claim, e.value]));
    const references = { sheet, userMessage: QUESTION };
    expect(checkNumbers(result.answer, references).untraced).toEqual([]);
    expect(result.answer).toContain(`mean ${Number(sheet['ds-001.mean'].toFixed(2))} bpm`);
    // What a client that appends every delta (the contract's own browser sample) shows, at every moment.
    expect(shown).toBe(result.answer);
    expect(checkNumbers(shown, references).untraced).toEqual([]);
    expect(stream.text('synthesis')).toBe(result.answer);
    // The repair is inside the step: no step runs again, and nothing is announced to discard.
    expect(retries).toEqual([]);

    const factCheck = result.fact_check!;
    expect(factCheck.issues).toHaveLength(1);
    expect(factCheck.repairs.resynthesised).toBe(expected.resynthesised);
    expect(factCheck.repairs.removed).toHaveLength(expected.removedCount);
    if (expected.removedCount > 0) {
      expect(factCheck.repairs.removed[0]).toMatchObject({
        value: factCheck.issues[0].value,
        action: 'dropped_sentence',
      });
      expect(result.answer).not.toContain(factCheck.repairs.removed[0].sentence);
    }
  });
});
