/**
 * The Fact Sheet (seed 002, "The Fact Sheet contract"): the immutable dictionary of every number
 * synthesis may cite, built deterministically from the validated findings.
 *
 * - keys are `<finding_id>.<numbers_key>`; a CI pair `[lo, hi]` becomes `<key>_low` / `<key>_high`;
 * - only finite numbers enter; anything else (NaN, ±Inf, arrays that are not 2-tuples) is dropped;
 * - a finding id seen again is suffixed `-2`, `-3`, … so no number is silently lost;
 * - rejected findings contribute nothing; conditional ones are tagged so the answer must hedge.
 */
import type { FactEntry } from '../../contracts/turn';

export type FactSheet = Record<string, number>;

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
  }
  return { sheet, entries };
}
