/**
 * (d) What one finding's gates cost in the warm, long-lived Python process a worker keeps
 * (platform/gates/): interpreter start-up and the numpy/scipy import are paid by one
 * warm-up request, then each finding goes in a request of its own, as a turn sends it, and is timed
 * from `run([series])` to its outcome (both sides' contract checks, the pipe and the gates included).
 *
 * The data is one synthetic person's (generateHealthData, missing days and all). A finding "at n" is
 * the shortest trailing window holding n observations the gates use: complete (feature, target) pairs
 * for an association, observed feature values for a trend or a scalar.
 */
import type { FindingKind, FindingSeries, GatesOutcome } from '../../contracts/findings';
import { createGatesRunner } from '../../platform/gates';
import type { DailyMetric, DailyRow } from '../../contracts/health-records';
import { generateHealthData, PLANTED_EFFECTS } from '../synthetic-data/generate';
import { nowMs, summarize, type Summary } from './stats';

export interface GatesPerFindingOptions {
  python: string;
  /** Observations per finding, e.g. [100, 1000]. */
  sizes: number[];
  /** Timed requests per kind and size. */
  runs: number;
}

export interface GatesSeriesResult {
  kind: FindingKind;
  n: number;
  /** Calendar days in the window, missing days included. */
  days: number;
  ms: Summary;
  /** Gates that ran, and the verdict (the same on every run: the gates are deterministic). */
  gatesRun: number;
  verdict: GatesOutcome['verdict'];
}

export interface GatesPerFindingResult {
  /** The warm-up request: process start-up, imports and one association at the smallest n. */
  warmupMs: number;
  series: GatesSeriesResult[];
}

const SEED = 11;
/** Enough days that the largest window is found even with ~15 % of the pairs incomplete. */
const HISTORY_DAYS = 1400;
const END_DATE = new Date('2026-11-22T12:00:00Z');
const KINDS: readonly FindingKind[] = ['association', 'trend', 'scalar'];

const association = PLANTED_EFFECTS.find((e) => e.kind === 'association' && e.target !== null)!;
const TREND_METRIC: DailyMetric = 'resting_heart_rate';

/** The trailing rows holding `n` rows that `counts` accepts. */
function trailingWindow(rows: DailyRow[], n: number, counts: (row: DailyRow) => boolean): DailyRow[] {
  let found = 0;
  for (let start = rows.length - 1; start >= 0; start--) {
    if (counts(rows[start]) && ++found === n) return rows.slice(start);
  }
  throw new Error(`only ${found} of the ${n} observations wanted in ${rows.length} days of data`);
}

/** One finding of `kind` with `n` usable observations. The numbers it claims do not matter to the gates. */
function findingSeries(rows: DailyRow[], kind: FindingKind, n: number): FindingSeries {
  const finding = {
    id: `bench-${kind}-${n}`,
    kind,
    numbers: {},
    n,
    unit: null,
  };
  if (kind === 'association') {
    const feature = association.feature;
    const target = association.target!;
    const window = trailingWindow(rows, n, (r) => r[feature] !== null && r[target] !== null);
    return {
      finding: { ...finding, claim: association.description, feature, target, window: `last ${window.length} days` },
      feature_values: window.map((r) => r[feature]),
      target_values: window.map((r) => r[target]),
    };
  }
  const window = trailingWindow(rows, n, (r) => r[TREND_METRIC] !== null);
  return {
    finding: {
      ...finding,
      claim: kind === 'trend' ? 'resting heart rate, recent half vs prior half' : 'average resting heart rate',
      feature: TREND_METRIC,
      target: null,
      window: `last ${window.length} days`,
    },
    feature_values: window.map((r) => r[TREND_METRIC]),
    // Prior half against recent half: both windows resampled by the bootstrap hold about n/2 values.
    ...(kind === 'trend' ? { recent_start: Math.floor(window.length / 2) } : {}),
  };
}

export async function measureGatesPerFinding(opts: GatesPerFindingOptions): Promise<GatesPerFindingResult> {
  const rows = generateHealthData({ seed: SEED, days: HISTORY_DAYS, endDate: END_DATE }).daily;
  const cases = opts.sizes.flatMap((n) => KINDS.map((kind) => ({ kind, n, series: findingSeries(rows, kind, n) })));
  const runner = createGatesRunner({ python: opts.python });
  try {
    const warmupStarted = nowMs();
    await runner.run([findingSeries(rows, 'association', Math.min(...opts.sizes))]);
    const warmupMs = nowMs() - warmupStarted;

    const samples = cases.map(() => [] as number[]);
    const outcomes: GatesOutcome[] = [];
    // Round robin over the cases, so a slow patch of the machine lands on all of them alike.
    for (let run = 0; run < opts.runs; run++) {
      for (const [i, c] of cases.entries()) {
        const started = nowMs();
        const [outcome] = await runner.run([c.series]);
        samples[i].push(nowMs() - started);
        outcomes[i] = outcome;
      }
    }

    return {
      warmupMs,
      series: cases.map((c, i) => {
        const outcome = outcomes[i];
        // A hard gate failing would stop the gates early and time less work than the kind costs.
        if (outcome.hard_rejection !== null) {
          throw new Error(
            `${c.series.finding.id} was rejected by ${outcome.hard_rejection}: not a full run of the gates`,
          );
        }
        return {
          kind: c.kind,
          n: c.n,
          days: c.series.feature_values.length,
          ms: summarize(samples[i]),
          gatesRun: outcome.gates.length,
          verdict: outcome.verdict,
        };
      }),
    };
  } finally {
    await runner.close();
  }
}
