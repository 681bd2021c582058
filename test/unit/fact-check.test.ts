import {
  UNVERIFIED_ANSWER,
  UNVERIFIED_NUMBER,
  checkNumbers,
  factCheckReply,
  removeUntraced,
  withinTolerance,
} from '../../checks/fact-check';
import { extractNumbers } from '../../checks/numbers';

const sheet = {
  'ds-001.avg': 60.39,
  'ds-001.sd': 4.47,
  'ds-002.effect': -0.374,
  'ds-002.noise_sd': 18.74,
  'ds-003.total': 371.83,
};

describe('factCheckReply', () => {
  test('numbers in the sheet pass, within 2 % or 0.05, and by absolute value', () => {
    expect(factCheckReply('Your average resting heart rate is 60.4 bpm, SD 4.47; effect 0.37.', sheet, '')).toEqual([]);
    expect(factCheckReply('About 372 in total.', sheet, '')).toEqual([]);
  });

  test('a fabricated number is flagged as a warning', () => {
    expect(factCheckReply('Your average is 78.3 bpm.', sheet, '')).toEqual([{ value: 78.3, severity: 'warn' }]);
    expect(factCheckReply('Your average is 62.1 bpm.', sheet, '')).toEqual([{ value: 62.1, severity: 'warn' }]);
  });

  test('pairwise ratios of sheet values pass (e.g. effect / noise)', () => {
    // 4.47 / 60.39 ≈ 0.074; -0.374 / 18.74 ≈ -0.02 → 0.02 within the 0.05 floor anyway
    expect(factCheckReply('Relative variability is 0.074.', sheet, '')).toEqual([]);
  });

  test('numbers echoed from the user message or the Domain Expert prose pass', () => {
    expect(factCheckReply('Your 7.3% drop is small.', sheet, 'why did my sleep drop 7.3%?')).toEqual([]);
    expect(
      factCheckReply('A PSQI change of 4.4 is clinically meaningful.', sheet, 'q', 'The PSQI MCID is 4.4 points.'),
    ).toEqual([]);
  });

  test('exemptions: list indices, years, links, arXiv ids, N=…, ISO dates', () => {
    const reply =
      'Three points: 1) sleep, 2) steps. See Smith 2019 and [the study](https://x.org/a/123.45), arXiv:2401.12345, ' +
      'N=1,234 participants, measured on 2026-05-25.';
    expect(factCheckReply(reply, sheet, '')).toEqual([]);
  });

  test('integers of 100 and more and decimals are checked', () => {
    expect(factCheckReply('You walked 12,000 steps and slept 7.5 hours.', sheet, '')).toEqual([
      { value: 12000, severity: 'warn' },
      { value: 7.5, severity: 'warn' },
    ]);
  });

  test('a percentage may render a sheet fraction', () => {
    expect(factCheckReply('That is 7.4% of your average.', { 'ds-001.ratio': 0.074 }, '')).toEqual([]);
  });
});

describe('what is checked: every quantity, whatever its size', () => {
  // Against an empty sheet, so no ratio of two sheet values happens to trace a number here.
  const flagged = (reply: string, userMessage = '', facts = {}) =>
    factCheckReply(reply, facts, userMessage).map((i) => i.value);

  test('a number with a unit is checked however small: "averaged 58 bpm", "45 minutes less"', () => {
    expect(flagged('Your resting heart rate averaged 58 bpm.')).toEqual([58]);
    expect(flagged('You slept 45 minutes less than the week before.')).toEqual([45]);
    expect(
      flagged('You got 7 hours of sleep on 3 nights, 12 steps, 5 points, 2 kg, 4 mg/dL, 3 ng/mL, 5 mmol/L.'),
    ).toEqual([7, 3, 12, 5, 2, 4, 3, 5]);
    expect(flagged('It ran 20 ms longer for 2 weeks, over 9 days, 6% of the time, with 1.5 h of deep sleep.')).toEqual([
      20, 2, 9, 6, 1.5,
    ]);
    // The unit right after the number, with or without a space, in any case.
    expect(flagged('58bpm, 7.5h, 45 MIN.')).toEqual([58, 7.5, 45]);
  });

  test('a traced number with a unit passes: the sheet, the user message, the Domain Expert', () => {
    expect(
      flagged('Your resting heart rate averaged 60.4 bpm over the last 90 days.', 'over the last 90 days?', sheet),
    ).toEqual([]);
    expect(factCheckReply('A normal resting rate is 60 to 100 bpm.', {}, '', 'Normal is 60–100 bpm.')).toEqual([]);
  });

  test('a bare small integer in running prose is a quantity too', () => {
    expect(flagged('You were active on 5 of the last 7 mornings.')).toEqual([5, 7]);
  });

  test('list indices are not quantities: "1." at a line start, "(2)", "3)" in a run of items', () => {
    expect(flagged('1. Sleep\n2. Steps\n  - 3) heart rate')).toEqual([]);
    expect(flagged('Two things: (1) sleep earlier, (2) walk more; 1) and 2) are easy.')).toEqual([]);
    expect(flagged('## 1. Sleep')).toEqual([]);
  });

  test('dates are not quantities: ISO dates, "1 June", "June 1st", "the 2nd of July", 6/1/2026', () => {
    expect(flagged('Since 2026-06-01 things improved.')).toEqual([]);
    expect(flagged('From 1 June to June 30, and on the 2nd of July, and on 6/1/2026.')).toEqual([]);
    expect(flagged('Measured at 2026-05-25T07:30:00Z.')).toEqual([]);
  });

  test('ids and citations are not quantities: ds-001, #12, [3], DOIs, PMIDs', () => {
    expect(flagged('Finding ds-001 (see #12 and [3], [4, 5]; doi:10.1000/xyz123, PMID: 12345678).')).toEqual([]);
  });

  test('a unit makes a quantity of what would read as a year or an index', () => {
    expect(flagged('You walked 2019 steps.')).toEqual([2019]);
    expect(flagged('That happened (2 nights) in a row.')).toEqual([2]);
    expect(flagged('1. 58 bpm on average')).toEqual([58]);
  });

  test('numbers_checked counts the quantities the check read', () => {
    const check = checkNumbers('1. Your average is 60.4 bpm, since 2026-06-01, 3 nights in 2025.', {
      sheet,
      userMessage: '',
    });
    expect(check.checked.map((t) => t.text)).toEqual(['60.4 bpm', '3 nights']);
    expect(check.untraced.map((t) => t.value)).toEqual([3]);
  });
});

describe('removal: an untraced number leaves the answer with its sentence', () => {
  const references = { sheet, userMessage: 'What is my average resting heart rate over the last 90 days?' };

  test('the sentence holding it is dropped, exactly, and nothing else', () => {
    const answer =
      'Your average resting heart rate over the last 90 days was 60.39 bpm. Compared with the month before, ' +
      'that is 58 bpm lower. That is within the normal range.\n\nWhat time do you usually go to bed?';
    expect(removeUntraced(answer, references)).toEqual({
      answer:
        'Your average resting heart rate over the last 90 days was 60.39 bpm. That is within the normal range.' +
        '\n\nWhat time do you usually go to bed?',
      removed: [
        { value: 58, sentence: 'Compared with the month before, that is 58 bpm lower.', action: 'dropped_sentence' },
      ],
    });
  });

  test('a list item with an untraced number goes with its marker; a paragraph emptied goes with its break', () => {
    const answer =
      'Two things:\n\n1. You averaged 60.4 bpm.\n2. You slept 45 minutes less.\n\nYou took 45 minutes.\n\nKeep it up.';
    const checked = removeUntraced(answer, references);
    expect(checked.answer).toBe('Two things:\n\n1. You averaged 60.4 bpm.\n\nKeep it up.');
    expect(checked.removed.map((r) => [r.value, r.sentence])).toEqual([
      [45, 'You slept 45 minutes less.'],
      [45, 'You took 45 minutes.'],
    ]);
  });

  test('decimals and abbreviations do not end a sentence', () => {
    const answer = 'Your average is 60.39 bpm, e.g. a normal level. Yesterday it was 71.5 bpm, i.e. higher.';
    expect(removeUntraced(answer, references).answer).toBe('Your average is 60.39 bpm, e.g. a normal level.');
  });

  test('when dropping would leave no answer, the number is hedged instead', () => {
    expect(removeUntraced('Your resting heart rate averaged 58 bpm.', references)).toEqual({
      answer: `Your resting heart rate averaged ${UNVERIFIED_NUMBER}.`,
      removed: [{ value: 58, sentence: 'Your resting heart rate averaged 58 bpm.', action: 'hedged_number' }],
    });
  });

  test('an empty answer becomes an honest sentence without numbers, never ""', () => {
    expect(removeUntraced('  \n ', references)).toEqual({ answer: UNVERIFIED_ANSWER, removed: [] });
    expect(UNVERIFIED_ANSWER).not.toMatch(/\d/);
  });

  test('an answer that traces is returned exactly as written', () => {
    const answer = 'Your average is 60.39 bpm over the last 90 days.\n';
    expect(removeUntraced(answer, references)).toEqual({ answer, removed: [] });
  });

  test('what removal returns always passes the check', () => {
    const answers = [
      'You averaged 58 bpm and 45 minutes. 1. Walk 9,000 steps. (2) Sleep 8 h.',
      '58 bpm. 45 min. 2019 steps.',
      'Since 2026-06-01: 1) 12 nights, 2) 3 weeks.',
    ];
    for (const answer of answers) {
      const checked = removeUntraced(answer, references);
      expect(checked.answer.trim()).not.toBe('');
      expect(checkNumbers(checked.answer, references).untraced).toEqual([]);
      expect(checked.removed.length).toBeGreaterThan(0);
    }
  });
});

describe('number extraction and tolerance', () => {
  test('extracts thousands separators, signs, decimals and percents', () => {
    expect(extractNumbers('-0.37, 1,234.5, 12%, −2').map((t) => t.value)).toEqual([-0.37, 1234.5, 12, -2]);
  });

  test('the tolerance is 2 % relative with a 0.05 absolute floor', () => {
    expect(withinTolerance(102, 100)).toBe(true);
    expect(withinTolerance(102.1, 100)).toBe(false);
    expect(withinTolerance(0.05, 0)).toBe(true);
    expect(withinTolerance(0.051, 0)).toBe(false);
  });
});
