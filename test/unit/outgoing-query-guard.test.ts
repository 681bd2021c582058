/**
 * checks/outgoing-query-guard.ts: topics go out; memory text, the user's words, their values and their
 * identity do not, including the smuggling a model might try. Each refusal is checked not to quote the text.
 */
import {
  guardOutgoingQuery,
  type OutgoingQueryGuardInput,
  type OutgoingQueryRefusal,
} from '../../checks/outgoing-query-guard';

const USER: Omit<OutgoingQueryGuardInput, 'query'> = {
  memoryTexts: [
    'Father had a heart attack at 52',
    'Sleeps badly after drinking coffee late in the afternoon',
    'Vegetarian diet',
  ],
  userMessages: [
    'Why has my resting heart rate gone up since I started the new night shift rota at the hospital?',
    'my LDL of 131 mg/dL worries me',
  ],
  userValues: [
    { value: 58, kind: 'salient' }, // mean resting heart rate
    { value: 3.36, kind: 'salient' }, // LDL, mmol/L
    { value: 1984, kind: 'salient' }, // birth year
    { value: 82.4, kind: 'salient' }, // weight
    { value: 2019, kind: 'row' }, // one day's steps
    { value: 150, kind: 'row' }, // one week's active zone minutes
    { value: 7, kind: 'row' },
  ],
  userIdentifiers: ['usr_01HZX4T9Q2', 'Jane Okonkwo-Smith', 'jane.okonkwo@example.com'],
};

const normalised = (text: string) =>
  text
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u);
const verdict = (query: string) => guardOutgoingQuery({ ...USER, query });
function refusedFor(query: string): OutgoingQueryRefusal[] {
  const result = verdict(query);
  return result.allowed ? [] : result.reasons;
}

test.each([
  'heart rate variability and sleep',
  'resting heart rate shift work',
  'LDL cholesterol vegetarian diet', // a 2-word memory entry is a topic
  'caffeine timing and sleep quality',
  'type 2 diabetes omega 3 zone 2 training', // small integers
  'LDL above 130 mg/dL cardiovascular risk', // 130 is not the user's 131
  '150 minutes moderate exercise per week', // a round threshold against row values
  'heart rate variability randomised trials 2015-2024', // a date range despite a day of 2019 steps
  'daily steps mortality since 2019',
  'adults over 65 sleep duration',
  'fifty minutes brisk walking',
])('a topic passes: %s', (query) => {
  expect(verdict(query)).toEqual({ allowed: true });
});

test.each<[string, OutgoingQueryRefusal]>([
  // (a) memory text, verbatim, lightly reworded, reordered
  ['father had a heart attack at 52', 'memory_text'],
  ['sleep badly after drinking coffee', 'memory_text'],
  ['coffee late afternoon sleeps badly drinking', 'memory_text'],
  ['heart attack at 52 father', 'memory_text'],
  // (b) a user message pasted whole or in a long run
  ['resting heart rate gone up since I started the new night shift', 'user_message'],
  ['my LDL of 131 mg/dL worries me', 'user_message'],
  // (c) the user's values, as digits, rounded, spelled out, as a birth year
  ['my LDL of 131 mg/dL', 'user_value'],
  ['resting heart rate 58 bpm normal?', 'user_value'],
  ['resting heart rate fifty-eight', 'user_value'],
  ['resting heart rate five eight', 'user_value'],
  ['LDL 3.36 mmol/L', 'user_value'],
  ['LDL 3.4 mmol/L risk', 'user_value'],
  ['LDL three point three six', 'user_value'],
  ['cardiovascular risk for women born in 1984', 'user_value'],
  ['women born nineteen eighty four heart disease', 'user_value'],
  ['weight 82 kg sleep apnea', 'user_value'],
  ['2019 steps per day benefits', 'user_value'],
  ['ＬＤＬ １３１', 'user_value'], // full-width
  // (d) who the user is
  ['Jane Okonkwo-Smith LDL', 'user_identifier'],
  ['okonkwo cholesterol', 'user_identifier'],
  ['JANE.OKONKWO@EXAMPLE.COM', 'user_identifier'],
  ['records for usr_01HZX4T9Q2', 'user_identifier'],
  ['Jäne sleep', 'user_identifier'], // accents off
])('refused: %s', (query, reason) => {
  const result = verdict(query);
  expect(result.allowed).toBe(false);
  if (result.allowed) return;
  expect(result.reasons).toContain(reason);
  // The refusal never quotes what it refused: no number of the query, no word of five letters or more.
  const quoted = normalised(query).filter((w) => /\d/.test(w) || w.length >= 5);
  expect(quoted.length).toBeGreaterThan(0);
  for (const word of quoted) expect(normalised(result.message)).not.toContain(word);
});

test('a long query is not a topic', () => {
  expect(refusedFor(Array.from({ length: 40 }, (_, i) => `word${i}`).join(' '))).toEqual(['not_a_topic']);
  expect(refusedFor('x'.repeat(300))).toEqual(['not_a_topic']);
});

test('numbers quoted in memory entries are the user’s, compared round or not', () => {
  expect(refusedFor('myocardial infarction before age 52')).toContain('user_value');
  expect(refusedFor('myocardial infarction before age 55')).toEqual([]);
});

test('a year in a date range is compared with the birth year, not with row values', () => {
  expect(refusedFor('heart disease studies 1984-1990')).toEqual(['user_value']);
  expect(refusedFor('step count studies 2019-2024')).toEqual([]);
  expect(refusedFor('a day of 2019 steps')).toEqual(['user_value']);
});

test('the documented limits: a unit conversion and digits split apart get through', () => {
  // LDL 3.36 mmol/L is about 130 mg/dL; only the value as given is known to the guard.
  expect(verdict('LDL 130 mg/dL')).toEqual({ allowed: true });
  expect(verdict('resting heart rate 5 8')).toEqual({ allowed: true });
});
