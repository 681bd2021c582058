import type { HealthDigest } from '../../../activities/agents/investigator/digest';
import { numbersText } from '../../../activities/agents/investigator/prompt';
import { roundTo } from '../../../checks/statistics';
import type { TestedHypothesis } from '../../../activities/agents/investigator/tested-hypotheses';
import type { ScriptedRule } from '../types';

/**
 * The Hypothesis Investigator's two model calls (docs/design.md#hypothesis-investigator), answered from
 * their inputs:
 * - investigator_hypotheses: from the digest, the hypotheses that hold the synthetic data's planted
 *   effects (dev/synthetic-data/generate.ts PLANTED_EFFECTS) — the trend on the metric
 *   whose last 30 days moved most in SD units — plus one plausible non-effect (steps and REM sleep,
 *   the INDEPENDENT_PAIR), confidences ordering them; a hypothesis about a metric the digest has no
 *   data for, or already tested (either direction), is not proposed;
 * - investigator_briefing: a short briefing that cites no number except one copied from its
 *   validated findings.
 */

type Kind = 'association' | 'trend' | 'scalar';

interface Proposal {
  kind: Kind;
  feature: string;
  target: string | null;
  title: string;
  rationale: string;
  nextAction: string;
}

const ASSOCIATIONS: Array<Proposal & { confidence: number }> = [
  {
    kind: 'association',
    feature: 'active_zone_minutes',
    target: 'deep_sleep_minutes',
    confidence: 0.8,
    title: 'More active zone minutes during the day go with more deep sleep that night',
    rationale: 'Vigorous activity builds sleep pressure, which deepens slow-wave sleep the following night.',
    nextAction: 'Keep a few harder sessions each week and watch deep sleep on those nights.',
  },
  {
    kind: 'association',
    feature: 'steps',
    target: 'stress_management_score',
    confidence: 0.7,
    title: 'Days with more steps have a better stress management score',
    rationale: 'Walking lowers sympathetic arousal, which the stress score reflects.',
    nextAction: 'Add a short walk on busy days.',
  },
  {
    kind: 'association',
    feature: 'heart_rate_variability',
    target: 'resting_heart_rate',
    confidence: 0.6,
    title: 'Heart rate variability is lower on days when resting heart rate is higher',
    rationale: 'Both reflect autonomic balance: more vagal tone raises HRV and lowers resting heart rate.',
    nextAction: 'Use the pair as a daily recovery check.',
  },
  {
    kind: 'association',
    feature: 'steps',
    target: 'rem_sleep_minutes',
    confidence: 0.4,
    title: 'Days with more steps are followed by more REM sleep',
    rationale: 'Daytime activity might lengthen REM sleep, though the evidence for it is thin.',
    nextAction: 'Compare REM sleep after active and quiet days.',
  },
];
const TREND_CONFIDENCE = 0.75;

/**
 * Metrics the digest has data for, with their change in SD units as the prompt shows it (two
 * decimals; null when it has none).
 */
function digestMetrics(digest: HealthDigest): Map<string, number | null> {
  return new Map(
    digest.metrics
      .filter((m) => m.n > 0)
      .map((m) => [m.metric, m.deltaSd === null ? null : roundTo(m.deltaSd, 2)] as const),
  );
}

/** `kind:feature[:target]` of each tested hypothesis, associations in both directions. */
function testedKeys(tested: TestedHypothesis[]): Set<string> {
  const keys = new Set<string>();
  for (const { kind, feature, target } of tested) {
    if (kind === 'association' && target) {
      keys.add(`association:${feature}:${target}`).add(`association:${target}:${feature}`);
    } else {
      // An entry that does not say its kind is a trend or a scalar: neither is proposed again.
      for (const k of kind === null ? ['trend', 'scalar'] : [kind]) keys.add(`${k}:${feature}`);
    }
  }
  return keys;
}

const words = (column: string) => column.replace(/_/g, ' ');
const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const inSentence = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

function trendProposal(metric: string, change: number): Proposal {
  const direction = change < 0 ? 'falling' : 'rising';
  return {
    kind: 'trend',
    feature: metric,
    target: null,
    title: `${sentence(words(metric))} has been ${direction} over the last month`,
    rationale: `Of all metrics in the digest, ${words(metric)} moved most between the last 30 days and the 30 before; a sustained change like this usually has a cause, such as new training or a change in routine.`,
    nextAction: `Look at what changed in the routine when ${words(metric)} started ${direction}.`,
  };
}

export const investigatorHypotheses: ScriptedRule<'investigator_hypotheses'> = {
  step: 'investigator_hypotheses',
  respond(req) {
    const metrics = digestMetrics(req.inputs.digest);
    const tested = testedKeys(req.inputs.tested);
    const keyOf = (p: Proposal) => (p.target ? `${p.kind}:${p.feature}:${p.target}` : `${p.kind}:${p.feature}`);
    const testable = (p: Proposal) =>
      !tested.has(keyOf(p)) && metrics.has(p.feature) && (p.target === null || metrics.has(p.target));

    const trendMetric = [...metrics]
      .filter((entry): entry is [string, number] => entry[1] !== null && !tested.has(`trend:${entry[0]}`))
      .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]) || a[0].localeCompare(b[0]))[0];
    const candidates = [
      ...(trendMetric ? [{ ...trendProposal(...trendMetric), confidence: TREND_CONFIDENCE }] : []),
      ...ASSOCIATIONS,
    ]
      .filter(testable)
      .sort((a, b) => b.confidence - a.confidence);

    const hypotheses = candidates.map((p, i) => ({
      id: `h${i + 1}`,
      title: p.title,
      rationale: p.rationale,
      test_plan:
        p.kind === 'trend'
          ? `Compare the mean of ${p.feature} over the last 30 days with the 30 days before.`
          : `Spearman correlation of ${p.feature} and ${p.target} over every day with both.`,
      data_required: p.target ? [p.feature, p.target] : [p.feature],
      missing_data_flag: false,
      expected_impact: p.confidence >= 0.7 ? 'high' : 'medium',
      confidence: p.confidence,
      next_action: p.nextAction,
      kind: p.kind,
      feature_to_test: p.feature,
      target_to_test: p.target,
    }));
    return { text: JSON.stringify(hypotheses, null, 2) };
  },
};

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

export const investigatorBriefing: ScriptedRule<'investigator_briefing'> = {
  step: 'investigator_briefing',
  respond(req) {
    // A finding with no number is not cited: the briefing quotes its first number, as the prompt lists it.
    const findings = req.inputs.validated.flatMap(({ finding, verdict }) =>
      verdict !== 'rejected' && Object.keys(finding.numbers).length > 0
        ? [{ verdict, claim: oneLine(finding.claim), firstNumber: numbersText(finding.numbers).split(', ')[0] }]
        : [],
    );
    const tested = new Set(req.inputs.validated.map((v) => v.finding.id));
    const untested = req.inputs.hypotheses.filter((h) => !tested.has(h.findingId)).map((h) => oneLine(h.title));
    const validated = findings.find((f) => f.verdict === 'validated');
    const conditional = findings.find((f) => f.verdict === 'conditional');

    const paragraphs: string[] = [];
    if (validated) {
      paragraphs.push(
        `I looked across your data for what stands out, and one pattern held up: ${inSentence(validated.claim)} (${validated.firstNumber}).`,
      );
    }
    if (conditional) {
      paragraphs.push(
        validated
          ? `There is also a preliminary signal worth tracking: ${inSentence(conditional.claim)}.`
          : `I looked across your data for what stands out: nothing held up well enough to call a finding, but there is a preliminary signal worth tracking: ${inSentence(conditional.claim)}.`,
      );
    }
    if (!validated && !conditional) {
      paragraphs.push(
        'I looked across your data for patterns worth your attention, but none of the ideas I tested held up well enough to call a finding yet, so I would not act on them.',
      );
    }
    if (untested.length > 0) paragraphs.push(`Worth looking into next: ${inSentence(untested[0])}.`);
    paragraphs.push('Would you like to turn this into a concrete next step?');
    return { text: paragraphs.join(' ') };
  },
};

export const investigatorRules: ScriptedRule[] = [investigatorHypotheses, investigatorBriefing];
