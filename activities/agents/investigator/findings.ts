/**
 * The Investigator's tests (`hypothesisToFinding`, docs/design.md#hypothesis-investigator): a hypothesis
 * becomes a finding whose numbers are computed here, from the user's rows — no model, no sandbox. The model
 * chose what to test; every number is ours. The finding covers exactly the days its gates' series will (see
 * gates-py/gates/finding_series.py): an association or a scalar over every day, a trend over the last 30 days
 * against the 30 before.
 */
import { findingSchema, type AgentFinding, type Finding } from '../../../contracts/findings';
import { columnUnit, type DailyRow } from '../../../contracts/health-records';
import { hypothesisKey, type Hypothesis } from './hypotheses';
import { mean, observed, pairedValues, recentAndPrior, roundTo, sampleSd, spearman } from '../../../checks/statistics';

const TREND_WINDOW_DAYS = 30;

const RHO_DECIMALS = 3;
const LEVEL_DECIMALS = 2;

type UntestableReason = 'too_few_days' | 'constant';

export type HypothesisTest = { ok: true; finding: AgentFinding } | { ok: false; reason: UntestableReason; n: number };

function computeNumbers(
  h: Hypothesis,
  daily: readonly DailyRow[],
): { numbers: Finding['numbers']; n: number } | { reason: UntestableReason; n: number } {
  const feature = h.feature_to_test;
  if (h.kind === 'association') {
    const { x, y } = pairedValues(daily, feature, h.target_to_test!);
    if (x.length < 2) return { reason: 'too_few_days', n: x.length };
    const rho = spearman(x, y);
    if (rho === null) return { reason: 'constant', n: x.length };
    return { numbers: { rho: roundTo(rho, RHO_DECIMALS), n: x.length }, n: x.length };
  }
  if (h.kind === 'trend') {
    const { recent, prior } = recentAndPrior(daily, feature, TREND_WINDOW_DAYS);
    const recentMean = mean(recent);
    const priorMean = mean(prior);
    const n = recent.length + prior.length;
    if (recentMean === null || priorMean === null) return { reason: 'too_few_days', n };
    return {
      numbers: {
        recent_mean: roundTo(recentMean, LEVEL_DECIMALS),
        prior_mean: roundTo(priorMean, LEVEL_DECIMALS),
        // The change of the unrounded means, rounded once.
        effect: roundTo(recentMean - priorMean, LEVEL_DECIMALS),
      },
      n,
    };
  }
  const values = observed(daily, feature);
  const m = mean(values);
  const sd = sampleSd(values);
  if (m === null || sd === null) return { reason: 'too_few_days', n: values.length };
  return {
    numbers: { mean: roundTo(m, LEVEL_DECIMALS), sd: roundTo(sd, LEVEL_DECIMALS), n: values.length },
    n: values.length,
  };
}

const WINDOW_LABEL = {
  association: 'all available days',
  scalar: 'all available days',
  trend: `the last ${TREND_WINDOW_DAYS} days vs the ${TREND_WINDOW_DAYS} days before`,
} as const;

export function hypothesisToFinding(h: Hypothesis, daily: readonly DailyRow[]): HypothesisTest {
  const computed = computeNumbers(h, daily);
  if ('reason' in computed) return { ok: false, ...computed };
  const finding = findingSchema.parse({
    id: hypothesisKey({ kind: h.kind, feature: h.feature_to_test, target: h.target_to_test }),
    claim: h.title,
    kind: h.kind,
    feature: h.feature_to_test,
    target: h.kind === 'association' ? h.target_to_test : null,
    numbers: computed.numbers,
    n: computed.n,
    window: WINDOW_LABEL[h.kind],
    unit: h.kind === 'association' ? null : columnUnit(h.feature_to_test),
    ...(h.rationale.trim() ? { mechanism: h.rationale.trim() } : {}),
  });
  return {
    ok: true,
    finding: { finding, windowDays: h.kind === 'trend' ? TREND_WINDOW_DAYS : null, source: 'investigator' },
  };
}
