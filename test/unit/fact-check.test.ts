import { extractNumbers, factCheckReply, withinTolerance } from '../../activities/steps/fact-check';

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

  test('exemptions: small bare integers, years, links, arXiv ids, N=…, ISO dates', () => {
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
