/**
 * The Health Coach's personal anchors as a turn's result carries them (docs/design.md#personal-anchors), and the
 * numbers an answer that quotes one may trace to.
 *
 * Anchors are numbers our own code computes from the user's rows (activities/agents/health-coach/anchors.ts) so
 * the coach can speak to this person; they are not findings, and are not validated, so they are not on the fact
 * sheet, which holds only what validation passed. The binding fact-check still traces every number of the answer:
 * an anchor's value, and the lengths its window states ("the last 14 days"), are references like the sheet's.
 */
import type { FactEntry, PersonalAnchorEntry } from '../contracts/turn';
import { windowEntries, type FactSheet } from './fact-sheet';

/** An anchor as the coach computes it. */
interface CoachAnchor {
  key: string;
  label: string;
  value: number;
  unit: string | null;
  n: number;
  window: string;
}

/** The coach's anchors as `result.personal_anchors` lists them, named `anchor.<key>`; a value that is not finite is dropped. */
export function personalAnchorEntries(anchors: readonly CoachAnchor[]): PersonalAnchorEntry[] {
  return anchors
    .filter((anchor) => Number.isFinite(anchor.value))
    .map(({ key, label, value, unit, n, window }) => ({ claim: `anchor.${key}`, label, value, unit, n, window }));
}

/** The numbers an answer may quote from the anchors: each value, and each length its window states. */
export function anchorReferences(anchors: readonly PersonalAnchorEntry[]): FactSheet {
  const references: FactSheet = {};
  for (const { claim, value, n, window } of anchors) {
    references[claim] = value;
    for (const entry of windowEntries(claim, { source: 'personal_anchor', n, window })) {
      references[entry.claim] = entry.value;
    }
  }
  return references;
}

/**
 * Every number a completed answer may cite from its result: the fact sheet's and the personal anchors'. (The
 * user's message and the Domain Expert's prose are the fact-check's other references.)
 */
export function citableNumbers(result: {
  fact_sheet: FactEntry[];
  personal_anchors?: PersonalAnchorEntry[];
}): FactSheet {
  return {
    ...Object.fromEntries(result.fact_sheet.map((entry) => [entry.claim, entry.value])),
    ...anchorReferences(result.personal_anchors ?? []),
  };
}
