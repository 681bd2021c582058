/**
 * The README's "What to ask" table is true: every example question is understood as the pattern its
 * row names, so it brings in the agents the row lists.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PATTERN_ROUTES } from '../../../dev/scripted-model/language/patterns';
import { understand } from '../../../dev/scripted-model/language/understand-question';
import type { RoutingPattern } from '../../../dev/scripted-model/language/understanding';

const PATTERN_OF_ROW: Record<string, RoutingPattern> = {
  '1 · knowledge': 'knowledge',
  '2 · my data': 'my_data',
  '3 · my data, judged': 'my_data_judged',
  '4 · coaching': 'coaching',
  '5 · coaching on my data': 'coaching_on_my_data',
  '6 · coaching with data and medical context': 'coaching_with_context',
  'open-ended': 'investigate',
  conversation: 'conversation',
  'a metric the data does not hold': 'unavailable',
  unclear: 'unclear',
};

/** The rows of the table under "### What to ask": [pattern cell, questions]. */
function exampleRows(): Array<{ row: string; questions: string[] }> {
  const readme = readFileSync(path.join(__dirname, '../../../README.md'), 'utf8');
  const section = readme.split('### What to ask')[1]?.split(/\n#{2,3} /)[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !/^\| (pattern|-)/.test(line))
    .map((line) => {
      const [row, , examples] = line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim());
      return { row, questions: [...examples.matchAll(/"([^"]+)"/g)].map((m) => m[1]) };
    });
}

const rows = exampleRows();

test('the table has a row for every pattern, each with an example', () => {
  expect(rows.map((r) => PATTERN_OF_ROW[r.row]).sort()).toEqual(Object.keys(PATTERN_ROUTES).sort());
  for (const { questions } of rows) expect(questions.length).toBeGreaterThan(0);
});

test.each(rows.flatMap(({ row, questions }) => questions.map((question) => [row, question] as const)))(
  '%s: "%s"',
  (row, question) => {
    const { pattern, spec } = understand([{ role: 'user', content: question }]);
    expect(pattern).toBe(PATTERN_OF_ROW[row]);
    // A question that brings in Data Science names a computation for it.
    if (
      PATTERN_ROUTES[pattern].supporting.includes('data_science') ||
      PATTERN_ROUTES[pattern].main === 'data_science'
    ) {
      expect(spec).not.toBeNull();
    }
  },
);
