/**
 * Literature priors (docs/design.md#the-critic): conservative, cited effects
 * between the metrics Amy reads and what they are known to relate to. The Critic weighs a finding
 * against them and the Assessment may cite only them.
 *
 * The file is checked when this module loads, so a malformed or unsourced entry stops the worker at
 * start-up instead of quietly leaving findings without their priors.
 */
import { z } from 'zod';
import type { Finding } from '../../contracts/findings';
import priorsFile from './biomarker-priors.json';

const PRIOR_DIRECTIONS = ['positive', 'negative', 'none', 'u_shaped'] as const;

export const literaturePriorSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9-]+$/),
    /** Named as the data names it (a daily metric, a composite, a lab marker) wherever the data has it. */
    feature: z.string().min(1),
    /** What the literature relates the feature to; it need not be in the user's data (e.g. mortality). */
    target: z.string().min(1).nullable(),
    direction: z.enum(PRIOR_DIRECTIONS),
    typical_effect: z.string().min(1),
    summary: z.string().min(1),
    source: z
      .object({
        citation: z.string().min(1),
        url: z.url().optional(),
        year: z.number().int().min(1900).max(2100),
      })
      .strict(),
  })
  .strict();
export type LiteraturePrior = z.infer<typeof literaturePriorSchema>;

const priorsFileSchema = z
  .array(literaturePriorSchema)
  .min(1)
  .refine((priors) => new Set(priors.map((p) => p.id)).size === priors.length, { message: 'prior ids must be unique' });

export const LITERATURE_PRIORS: readonly LiteraturePrior[] = priorsFileSchema.parse(priorsFile);

/** `Deep Sleep Minutes`, `deep-sleep-minutes` and `deep_sleep_minutes` are one name. */
const normaliseName = (name: string) =>
  name
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

/** Either name contains the other, so `ldl` finds `ldl_cholesterol` and `steps_7d_avg` finds `steps`. */
function namesMatch(a: string, b: string): boolean {
  const [x, y] = [normaliseName(a), normaliseName(b)];
  return x.includes(y) || y.includes(x);
}

/**
 * Priors whose feature or target substring-matches the finding's feature or target.
 * Priors that speak to both of the finding's names (this very pair) come first, so the most relevant
 * evidence leads the prompt.
 */
export function priorsFor(finding: Pick<Finding, 'feature' | 'target'>): LiteraturePrior[] {
  const findingNames = [finding.feature, finding.target].filter((name) => name !== null);
  const namesMatched = (prior: LiteraturePrior) =>
    findingNames.filter((name) =>
      [prior.feature, prior.target].some((priorName) => priorName !== null && namesMatch(priorName, name)),
    ).length;
  return LITERATURE_PRIORS.map((prior) => ({ prior, matched: namesMatched(prior) }))
    .filter(({ matched }) => matched > 0)
    .sort((a, b) => b.matched - a.matched)
    .map(({ prior }) => prior);
}
