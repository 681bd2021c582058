/**
 * The Fact Sheet (docs/design.md#the-fact-sheet): the immutable dictionary of every number
 * synthesis may cite, built deterministically from the validated findings.
 *
 * - keys are `<finding_id>.<numbers_key>`; a CI pair `[lo, hi]` becomes `<key>_low` / `<key>_high`;
 * - only finite numbers enter; anything else (NaN, ±Inf, arrays that are not 2-tuples) is dropped;
 * - a finding id seen again is suffixed `-2`, `-3`, … so no number is silently lost;
 * - rejected findings contribute nothing; conditional ones are tagged so the answer must hedge;
 * - the lengths a finding's window states ("the last 90 days") are entries of their
 *   own, `<id>.window_days` (`_2`, … when it states several): an answer names the window it speaks of,
 *   and since the fact-check binds, a window's length must trace like the finding's values do. Dates
 *   in a window ("the days since 2026-06-01") are not lengths and add nothing; a length the sheet
 *   already holds (two findings over the last 90 days) is not listed twice.
 */
import type { FactEntry } from '../contracts/turn';
import { extractNumbers } from './numbers';

export type FactSheet = Record<string, number>;

/** The Fact Sheet's key for the lengths a finding's window states: `<id>.window_days`, `_2`, … */
const WINDOW_DAYS_KEY = 'window_days';
export const isWindowLength = (claim: string) => new RegExp(`\\.${WINDOW_DAYS_KEY}(_\\d+)?$`).test(claim);

export interface FactSheetFinding {
  finding: {
    id: string;
    numbers: Record<string, unknown>;
    n: number;
    window: string;
    unit?: string | null;
  };
  verdict: 'validated' | 'conditional' | 'rejected';
  /** Which agent produced the finding (`data_science`, `investigator`). */
  source: string;
}

export interface BuiltFactSheet {
  sheet: FactSheet;
  entries: FactEntry[];
}

/** `n`, `n_recent`, …: observation counts, which are in no unit whatever the finding measures. */
const isCount = (key: string) => key === 'n' || key.startsWith('n_');

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function numberEntries(numbers: Record<string, unknown>): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  for (const [key, value] of Object.entries(numbers)) {
    if (isFiniteNumber(value)) out.push([key, value]);
    else if (Array.isArray(value) && value.length === 2 && value.every(isFiniteNumber)) {
      out.push([`${key}_low`, value[0] as number], [`${key}_high`, value[1] as number]);
    }
  }
  return out;
}

/** The lengths a window label states, each once, with their unit ("the 30 days before the last 7 days" → 30, 7). */
function windowLengths(window: string): Array<{ value: number; unit: string | null }> {
  const seen = new Set<number>();
  return extractNumbers(window).flatMap((token) => {
    if (token.notAQuantity !== null || seen.has(token.value)) return [];
    seen.add(token.value);
    return [{ value: token.value, unit: token.unit }];
  });
}

/** Whether the sheet holds this window length already: one entry per length is enough to trace it. */
const hasWindowLength = (sheet: FactSheet, value: number) =>
  Object.entries(sheet).some(([claim, v]) => v === value && isWindowLength(claim));

/** Entries for the window lengths of the fact `claimPrefix` names (a finding's id, an anchor's claim). */
export function windowEntries(claimPrefix: string, fact: Omit<FactEntry, 'claim' | 'value' | 'unit'>): FactEntry[] {
  return windowLengths(fact.window ?? '').map(({ value, unit }, i) => ({
    ...fact,
    claim: `${claimPrefix}.${WINDOW_DAYS_KEY}${i === 0 ? '' : `_${i + 1}`}`,
    value,
    unit,
  }));
}

export function buildFactSheet(findings: FactSheetFinding[]): BuiltFactSheet {
  const sheet: FactSheet = {};
  const entries: FactEntry[] = [];
  const seen = new Map<string, number>();
  for (const { finding, verdict, source } of findings) {
    if (verdict === 'rejected') continue;
    const occurrence = (seen.get(finding.id) ?? 0) + 1;
    seen.set(finding.id, occurrence);
    const id = occurrence === 1 ? finding.id : `${finding.id}-${occurrence}`;
    for (const [key, value] of numberEntries(finding.numbers)) {
      const claim = `${id}.${key}`;
      sheet[claim] = value;
      entries.push({
        claim,
        value,
        unit: isCount(key) ? null : (finding.unit ?? null),
        source,
        n: finding.n,
        window: finding.window,
        ...(verdict === 'conditional' ? { verdict: 'conditional' as const } : {}),
      });
    }
    const windows = windowEntries(id, {
      source,
      n: finding.n,
      window: finding.window,
      ...(verdict === 'conditional' ? { verdict: 'conditional' as const } : {}),
    });
    for (const entry of windows) {
      if (hasWindowLength(sheet, entry.value)) continue;
      sheet[entry.claim] = entry.value;
      entries.push(entry);
    }
  }
  return { sheet, entries };
}
