import {
  canonicalQuestion,
  mentionedMetrics,
  readAnalysisAsk,
  readCanonicalAsk,
  windowDays,
} from '../../dev/scripted-model/rules/analysis-ask';

describe("the scripted model's reading of data questions", () => {
  test.each([
    [
      'What is my average resting heart rate over the last 90 days?',
      { statistic: 'mean', metric: 'resting_heart_rate', windowDays: 90 },
    ],
    ['median steps in the past 2 weeks', { statistic: 'median', metric: 'steps', windowDays: 14 }],
    ['How consistent is my sleep?', { statistic: 'sd', metric: 'sleep_minutes' }],
    ['Has my HRV been dropping?', { statistic: 'change', metric: 'heart_rate_variability', windowDays: 30 }],
    [
      'Does my active zone minutes affect my deep sleep?',
      { statistic: 'correlation', metric: 'active_zone_minutes', other: 'deep_sleep_minutes' },
    ],
    ['Which day of the week do I sleep the most?', { statistic: 'day_of_week', metric: 'sleep_minutes' }],
  ])('%s', (question, expected) => {
    expect(readAnalysisAsk(question)).toEqual(expect.objectContaining(expected));
  });

  test('no metric, no ask', () => {
    expect(readAnalysisAsk('thanks!')).toBeNull();
  });

  test('longer phrases win: "deep sleep" is not also "sleep"', () => {
    expect(mentionedMetrics('my deep sleep and my sleep score')).toEqual(['deep_sleep_minutes', 'sleep_score']);
  });

  test('windows in days, weeks, months', () => {
    expect(windowDays('over the last 3 months')).toBe(90);
    expect(windowDays('past week')).toBe(7);
    expect(windowDays('ever')).toBeUndefined();
  });

  test('every canonical question reads back to the same ask', () => {
    const asks = [
      { statistic: 'mean', metric: 'steps', windowDays: 90 },
      { statistic: 'median', metric: 'sleep_minutes', windowDays: undefined },
      { statistic: 'sd', metric: 'resting_heart_rate', windowDays: 30 },
      { statistic: 'change', metric: 'heart_rate_variability', windowDays: 30 },
      { statistic: 'correlation', metric: 'steps', other: 'stress_management_score', windowDays: 180 },
      { statistic: 'day_of_week', metric: 'sleep_minutes', windowDays: undefined },
    ] as const;
    for (const ask of asks) expect(readCanonicalAsk(canonicalQuestion(ask))).toEqual(ask);
  });
});
