/**
 * The Domain Expert's `literature_priors` tool: the cited literature priors (activities/data/literature-priors.ts,
 * the same ones the Critic weighs findings against) whose feature or target mentions a term.
 */
import { z } from 'zod';
import { LITERATURE_PRIORS, type LiteraturePrior } from '../../data/literature-priors';
import { findReferenceEntry, normaliseBiomarkerName } from './range-compare';
import { defineTool } from './tool-contract';

export interface PriorsLookup {
  term: string;
  priors: LiteraturePrior[];
  note?: string;
}

/**
 * Priors whose feature or target contains the term, matched on snake_case names. A biomarker alias
 * also matches under its canonical name, so `LDL-C` finds the `ldl_cholesterol` priors.
 */
export function lookUpPriors(term: string): PriorsLookup {
  const needles = new Set([normaliseBiomarkerName(term)]);
  const entry = findReferenceEntry(term);
  if (entry) needles.add(entry.id);
  const mentions = (name: string | null) =>
    name !== null && [...needles].some((needle) => normaliseBiomarkerName(name).includes(needle));
  const priors = LITERATURE_PRIORS.filter((p) => mentions(p.feature) || mentions(p.target));
  return priors.length > 0 ? { term, priors } : { term, priors, note: `no literature prior mentions "${term}"` };
}

export const literaturePriorsTool = defineTool({
  name: 'literature_priors',
  description:
    'Look up cited, conservative effects from the literature whose metric or outcome mentions a term (e.g. "heart_rate_variability", "ldl", "steps", "sleep_minutes"). Each prior has a direction, a typical effect size, a summary and its source with a URL.',
  input: z
    .object({ term: z.string().trim().min(2).max(80).describe('A metric or biomarker name, snake_case preferred') })
    .strict(),
  run: ({ term }) => lookUpPriors(term),
});
