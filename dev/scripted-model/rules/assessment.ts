import type { ScriptedRule } from '../types';
import { isPairPrior, reviewedFinding, reviewedPriors, type ReviewedFinding } from './critic';

/**
 * The Assessment: the mechanism is the summary of the prior about this very pair, else of
 * the first matching prior, else an honest "no established mechanism known" (a scalar, a level, gets no
 * prior's mechanism: it is a measurement, not an effect); novelty is `established`
 * when a prior speaks for this very pair, `supported` when priors only touch it, `user_specific` when
 * none do; associations and trends get a strategy for this week naming the feature, a scalar gets
 * none; citations are the priors' own.
 */

const readable = (name: string) => name.replace(/_/g, ' ');

/** The lever a person can pull on this feature within a week. */
const LEVERS: Record<string, string> = {
  steps: 'add a 20-minute walk on the 3 days this week you expect to be least active',
  active_zone_minutes: 'schedule two 25-minute brisk sessions this week, each finishing at least 3 hours before bed',
  sleep_minutes: 'move your lights-out 30 minutes earlier on 4 nights this week',
  deep_sleep_minutes: 'keep the same bedtime every night this week and skip alcohol within 3 hours of it',
  rem_sleep_minutes: 'keep the same wake-up time every day this week, weekend included',
};

function strategyFor(finding: ReviewedFinding): string | null {
  if (finding.kind === 'scalar') return null;
  const lever =
    LEVERS[finding.feature] ??
    `on 3 days this week, note what you did differently on the days with the most ${readable(finding.feature)}`;
  const check =
    finding.kind === 'association' && finding.target !== null
      ? `then compare your ${readable(finding.target)} on those days with the rest of the week`
      : `then check whether ${readable(finding.feature)} keeps moving the same way next week`;
  return `To act on your ${readable(finding.feature)}: ${lever}, ${check}.`;
}

export const assessment: ScriptedRule<'assessment'> = {
  step: 'assessment',
  respond(req) {
    const finding = reviewedFinding(req.inputs.finding);
    const priors = reviewedPriors(req.inputs.priors);
    const pairPrior = priors.find((p) => isPairPrior(p, finding));
    const novelty = pairPrior ? 'established' : priors.length > 0 ? 'supported' : 'user_specific';
    // A level (an average, a spread) is a measurement, not an effect: no prior explains it.
    const lead = finding.kind === 'scalar' ? undefined : (pairPrior ?? priors.at(0));
    return {
      text: JSON.stringify({
        mechanism:
          lead?.summary ??
          (finding.kind === 'scalar'
            ? 'A summary of your own measurements; it implies no mechanism by itself.'
            : 'No established mechanism known; this is a pattern in your own data.'),
        novelty,
        strategy: strategyFor(finding),
        citations: priors.map((p) => p.citation),
      }),
    };
  },
};
