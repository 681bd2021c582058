/**
 * Asking what an ambiguous question means: the clarify step takes the model's question leniently where it is untidy
 * and not at all where it cannot be asked; the scripted model asks in the cases a careful person would (which
 * measure of sleep, which cholesterol marker, which recent period) and not of a question that already says.
 */
import { sanitiseClarification } from '../../activities/steps/clarify';
import { ambiguityOf } from '../../dev/scripted-model/language/ambiguity';
import { understand } from '../../dev/scripted-model/language/understand-question';

const raw = (options: { id: string; label: string }[], likely = '') => ({
  ambiguous: true as const,
  about: 'metric' as const,
  question: 'Which one?',
  options,
  likely_option_id: likely,
  free_text: false,
});

describe('the clarify step’s reply', () => {
  test('a question with its options, the likely one named', () => {
    expect(
      sanitiseClarification(
        raw(
          [
            { id: 'duration', label: 'How long I sleep' },
            { id: 'score', label: 'My sleep score' },
          ],
          'score',
        ),
      ),
    ).toEqual({
      ambiguous: true,
      about: 'metric',
      question: 'Which one?',
      options: [
        { id: 'duration', label: 'How long I sleep' },
        { id: 'score', label: 'My sleep score' },
      ],
      likelyOptionId: 'score',
      freeText: false,
    });
  });

  test('untidy ids are made ids, duplicates told apart, a likely option not offered becomes the first', () => {
    const clarification = sanitiseClarification(
      raw(
        [
          { id: 'Sleep Score!', label: 'My sleep score' },
          { id: 'sleep score', label: 'My sleep score, again' },
          { id: 'deep', label: 'My deep sleep' },
        ],
        'nothing',
      ),
    );
    expect(clarification).toMatchObject({ likelyOptionId: 'sleep_score' });
    expect(clarification.ambiguous && clarification.options.map((o) => o.id)).toEqual([
      'sleep_score',
      'sleep_score_2',
      'deep',
    ]);
  });

  test('fewer than two readings is no question: the turn goes on without asking', () => {
    expect(sanitiseClarification(raw([{ id: 'only', label: 'The only reading' }]))).toEqual({ ambiguous: false });
    expect(sanitiseClarification({ ambiguous: false })).toEqual({ ambiguous: false });
  });

  test('at most four readings are offered', () => {
    const many = Array.from({ length: 6 }, (_, i) => ({ id: `r${i}`, label: `Reading ${i}` }));
    const clarification = sanitiseClarification(raw(many));
    expect(clarification.ambiguous && clarification.options).toHaveLength(4);
  });
});

const user = (content: string) => [{ role: 'user' as const, content }];

describe('the scripted model asks back', () => {
  test.each([
    ['How has my sleep been lately?', 'metric', 'sleep_duration'],
    ['How is my sleep?', 'metric', 'sleep_duration'],
    ['How is my cholesterol?', 'markers', 'total'],
    ['Is my cholesterol ok?', 'markers', 'total'],
    ['What has my average resting heart rate been lately?', 'window', 'last_30_days'],
    ['How many steps do I take these days?', 'window', 'last_30_days'],
  ])('%s → about the %s, likely %s', (question, about, likely) => {
    expect(ambiguityOf(user(question))).toMatchObject({ about, likelyOptionId: likely });
  });

  test.each([
    'What is my average resting heart rate over the last 90 days?',
    'How much did I sleep last week?',
    'What is my average sleep score over the last month?',
    'Is my LDL cholesterol too high?',
    'What is heart rate variability?',
    'Thanks!',
    'Is there anything in my numbers worth knowing?',
  ])('%s → nothing to ask', (question) => {
    expect(ambiguityOf(user(question))).toBeNull();
  });

  test('each option, as the user’s reply, is read as the reading it names; the likely one as the question alone is', () => {
    for (const question of [
      'How has my sleep been lately?',
      'How is my cholesterol?',
      'How many steps do I take lately?',
    ]) {
      const ambiguity = ambiguityOf(user(question))!;
      const alone = understand(user(question)).spec;
      const readings = ambiguity.options.map(
        (option) =>
          understand([...user(question), { role: 'assistant', content: ambiguity.question }, ...user(option.label)])
            .spec,
      );
      expect(new Set(readings.map((spec) => JSON.stringify(spec))).size).toBe(ambiguity.options.length);
      const likely = ambiguity.options.findIndex((option) => option.id === ambiguity.likelyOptionId);
      expect(readings[likely]).toEqual(alone);
    }
  });
});
