/**
 * The phrasing corpus (test/fixtures/phrasing-corpus.json): questions written the way different people
 * ask them, each with the routing pattern and Data Science spec it must get. Routing must be right on
 * every one; when it is not, the failure prints a confusion table (expected pattern × understood
 * pattern) and the misread questions, so the fix goes into the vocabulary, not into one sentence.
 */
import { AGENT_LABELS } from '../../../contracts/steps';
import { readSpecSentence, specSentence } from '../../../dev/scripted-model/language/canonical';
import { defaultRules } from '../../../dev/scripted-model/rules';
import { PATTERN_ROUTES } from '../../../dev/scripted-model/language/patterns';
import { EXAMPLE_QUESTIONS, clarifyingReply, unavailableReply } from '../../../dev/scripted-model/language/replies';
import { understand } from '../../../dev/scripted-model/language/understand-question';
import type { DataSpec, RoutingPattern } from '../../../dev/scripted-model/language/understanding';
import { phrasingCorpus } from './phrasing-corpus';

const corpus = phrasingCorpus;

const understood = corpus.map((entry) => ({
  entry,
  got: understand([...(entry.history ?? []), { role: 'user', content: entry.question }]),
}));

const agentsOf = (pattern: RoutingPattern) => {
  const route = PATTERN_ROUTES[pattern];
  return `${route.main ?? '-'} + [${route.supporting.join(', ')}]`;
};

function confusionTable(rows: Array<{ expected: RoutingPattern; got: RoutingPattern }>): string {
  const patterns = [...new Set(rows.flatMap((r) => [r.expected, r.got]))].sort();
  const width = Math.max(...patterns.map((p) => p.length)) + 2;
  const header = ['expected \\ got'.padEnd(width), ...patterns.map((p) => p.slice(0, 8).padStart(9))].join('');
  const lines = patterns.map((expected) =>
    [
      expected.padEnd(width),
      ...patterns.map((got) => {
        const n = rows.filter((r) => r.expected === expected && r.got === got).length;
        return String(n || '.').padStart(9);
      }),
    ].join(''),
  );
  return [header, ...lines].join('\n');
}

/** Specs compared as the computation they name: an association's two metrics in either order. */
function sameSpec(expected: DataSpec | null, got: DataSpec | null): boolean {
  if (expected === null || got === null) return expected === got;
  const pair = (s: DataSpec) =>
    s.statistic === 'spearman' ? [s.feature, s.target].sort().join('|') : `${s.feature}|${s.target}`;
  return (
    expected.kind === got.kind &&
    expected.statistic === got.statistic &&
    pair(expected) === pair(got) &&
    JSON.stringify(expected.window) === JSON.stringify(got.window) &&
    (expected.workout_type ?? null) === (got.workout_type ?? null) &&
    (expected.measure ?? null) === (got.measure ?? null)
  );
}

test('the corpus is big and varied enough to mean something', () => {
  expect(corpus.length).toBeGreaterThanOrEqual(200);
  expect(new Set(corpus.map((e) => e.id)).size).toBe(corpus.length);
  const patterns = new Set(corpus.map((e) => e.pattern));
  expect([...patterns].sort()).toEqual(Object.keys(PATTERN_ROUTES).sort());
  expect(corpus.filter((e) => e.history && e.history.length > 0).length).toBeGreaterThanOrEqual(15);
});

test('every question routes to the agents of its pattern', () => {
  const wrong = understood.filter(
    ({ entry, got }) => agentsOf(entry.pattern) !== agentsOf(got.pattern) || entry.pattern !== got.pattern,
  );
  if (wrong.length > 0) {
    const table = confusionTable(understood.map(({ entry, got }) => ({ expected: entry.pattern, got: got.pattern })));
    const examples = wrong.map(
      ({ entry, got }) => `  ${entry.id}: "${entry.question}" → ${got.pattern} (expected ${entry.pattern})`,
    );
    throw new Error(
      `${wrong.length} of ${corpus.length} questions misrouted (${((100 * (corpus.length - wrong.length)) / corpus.length).toFixed(1)} % right)\n\n${table}\n\n${examples.join('\n')}`,
    );
  }
});

test('every data question gets the computation it asks for', () => {
  const wrong = understood.filter(({ entry, got }) => entry.pattern === got.pattern && !sameSpec(entry.spec, got.spec));
  if (wrong.length > 0) {
    const lines = wrong.map(
      ({ entry, got }) =>
        `  ${entry.id}: "${entry.question}"\n    expected ${JSON.stringify(entry.spec)}\n    got      ${JSON.stringify(got.spec)}`,
    );
    throw new Error(`${wrong.length} specs differ\n${lines.join('\n')}`);
  }
});

test('a question about a metric the data does not hold names it', () => {
  for (const { entry, got } of understood.filter(({ entry }) => entry.pattern === 'unavailable')) {
    expect({ id: entry.id, missing: got.missing.map((m) => m.toLowerCase()) }).toEqual({
      id: entry.id,
      missing: expect.arrayContaining((entry.missing ?? []).map((m) => m.toLowerCase())),
    });
  }
});

test('every spec survives the rephrase: its sentence reads back as the same spec', () => {
  const specs = corpus.flatMap((entry) => (entry.spec ? [entry.spec] : []));
  for (const spec of specs) {
    const sentence = specSentence(spec);
    expect({ sentence, spec: readSpecSentence(`Please do this. ${sentence} Thanks.`) }).toEqual({ sentence, spec });
  }
});

test('the graceful edges name what is missing and what works, with no number in them', () => {
  const reply = unavailableReply(['blood pressure', 'VO2 max']);
  expect(reply).toMatch(/doesn't include blood pressure and VO₂ max/);
  expect(reply).toMatch(/resting heart rate/);
  expect(
    clarifyingReply()
      .split('\n')
      .filter((line) => line.startsWith('- ')).length,
  ).toBeGreaterThanOrEqual(2);
  for (const text of [reply, clarifyingReply()]) expect(text).not.toMatch(/\d/);
  // The example questions it offers are understood as questions Amy can answer.
  for (const question of EXAMPLE_QUESTIONS) {
    expect(understand([{ role: 'user', content: question }]).pattern).not.toMatch(/unclear|unavailable|conversation/);
  }
});

test('the scripted model routes every corpus question through its route rule as the pattern says', () => {
  const rule = defaultRules.find((r) => r.step === 'route')!;
  const wrong = corpus.filter((entry) => {
    const messages = [...(entry.history ?? []), { role: 'user' as const, content: entry.question }];
    const response = rule.respond({
      step: 'route',
      inputs: { messages },
      model: 'm',
      messages: [],
      tools: [],
    } as never);
    const routing = JSON.parse(('text' in response ? response.text : undefined) ?? '{}') as {
      main_agent: string;
      supporting_agents: string;
    };
    const { main, supporting } = PATTERN_ROUTES[entry.pattern];
    return (
      routing.main_agent !== (main ? AGENT_LABELS[main] : '') ||
      routing.supporting_agents !== (main ? supporting.map((a) => AGENT_LABELS[a]).join('; ') : '')
    );
  });
  expect(wrong.map((entry) => entry.id)).toEqual([]);
});
