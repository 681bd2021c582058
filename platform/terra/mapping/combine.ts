/**
 * Several providers may say something about the same day or workout (a ring and a phone, a watch and
 * Apple Health copying it). Their values are never summed or averaged across providers: per metric, the
 * highest-priority provider that has it wins (./providers.ts). docs/terra-mapping.md#combining-providers.
 */
import { DAILY_METRICS, SLEEP_STAGES, type DailyMetric } from '../../../contracts/health-records';
import { stagesOverrun } from './days';
import { compareProviders } from './providers';
import type { DayContribution, WorkoutContribution } from './types';

type Values = Partial<Record<DailyMetric, number>>;

/** The night: its length and the stages that split it, always taken together from one provider. */
const NIGHT: readonly DailyMetric[] = ['sleep_minutes', ...SLEEP_STAGES];
/** Where a daily and a body record of one provider both have a metric, the daily summary's is taken. */
const KIND_ORDER: readonly DayContribution['kind'][] = ['daily', 'body', 'sleep'];

const providerId = (provider: string) => provider.toUpperCase();

/** The contributions in priority order, one per (provider, kind, key): of a repeated one, the last given counts. */
function ranked(contributions: readonly DayContribution[]): DayContribution[] {
  const latest = new Map<string, DayContribution>();
  for (const c of contributions) latest.set(`${providerId(c.provider)}\n${c.kind}\n${c.key}`, c);
  return [...latest.values()].sort(
    (a, b) => compareProviders(a.provider, b.provider) || KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind),
  );
}

/** Each provider's non-nap sleep sessions of the day, providers in priority order. */
function nightsByProvider(contributions: readonly DayContribution[]): DayContribution[][] {
  const byProvider = new Map<string, DayContribution[]>();
  for (const c of contributions) {
    if (c.kind !== 'sleep' || c.nap === true) continue;
    const sessions = byProvider.get(providerId(c.provider)) ?? [];
    byProvider.set(providerId(c.provider), [...sessions, c]);
  }
  return [...byProvider.values()];
}

/**
 * The night from the first provider whose sessions have any of its metrics: a night split into several
 * sessions (woken at 3 and back to sleep) is their sum. Taken from one provider as a whole, so that the
 * stages always belong to the total they split; stages that still overrun it (each session's rounding
 * adding up) are left out.
 */
function night(nights: DayContribution[][]): Values {
  for (const sessions of nights) {
    const sum: Values = {};
    for (const metric of NIGHT) {
      const values = sessions.flatMap((s) => (s.values[metric] === undefined ? [] : [s.values[metric]]));
      if (values.length > 0) sum[metric] = values.reduce((a, b) => a + b, 0);
    }
    if (Object.keys(sum).length === 0) continue;
    if (stagesOverrun(sum)) for (const stage of SLEEP_STAGES) delete sum[stage];
    return sum;
  }
  return {};
}

/** A score is of one session, never summed: the longest session's, from the first provider that scored one. */
function sleepScore(nights: DayContribution[][]): number | undefined {
  for (const sessions of nights) {
    const scored = sessions.filter((s) => s.values.sleep_score !== undefined);
    if (scored.length === 0) continue;
    const longest = scored.reduce((a, b) => ((b.values.sleep_minutes ?? -1) > (a.values.sleep_minutes ?? -1) ? b : a));
    return longest.values.sleep_score;
  }
  return undefined;
}

/**
 * One day's row from every contribution for that user and date (all providers, all kinds): per metric the
 * value of the highest-priority provider that has it, never a sum or mean across providers. Sleep: a provider's
 * non-nap sessions ending that day are summed first (a night split in two), naps never count.
 * Returns only the metrics some contribution has.
 */
export function combineDay(contributions: readonly DayContribution[]): Values {
  if (new Set(contributions.map((c) => c.date)).size > 1) {
    throw new Error('combineDay takes the contributions of one day only');
  }
  const all = ranked(contributions);
  const nights = nightsByProvider(all);
  const row: Values = { ...night(nights) };
  const score = sleepScore(nights);
  if (score !== undefined) row.sleep_score = score;
  for (const metric of DAILY_METRICS) {
    if (NIGHT.includes(metric) || metric === 'sleep_score') continue;
    const first = all.find((c) => c.kind !== 'sleep' && c.values[metric] !== undefined);
    if (first) row[metric] = first.values[metric];
  }
  return row;
}

const span = (w: WorkoutContribution) => ({ start: Date.parse(w.startedAt), end: Date.parse(w.endedAt) });

/** Whether the two sessions overlap by more than half of the shorter one: the same workout, recorded twice. */
function sameSession(a: WorkoutContribution, b: WorkoutContribution): boolean {
  const [x, y] = [span(a), span(b)];
  const overlap = Math.min(x.end, y.end) - Math.max(x.start, y.start);
  const shorter = Math.min(x.end - x.start, y.end - y.start);
  return overlap > shorter / 2;
}

/**
 * The workouts to keep among all providers' for one user and day: when two providers' sessions overlap by
 * more than half of the shorter one, only the higher-priority provider's is kept. Sessions of one provider
 * are all kept (two sessions back to back, or a brick run after a ride, are the provider's to tell apart).
 * In the order given.
 */
export function chooseWorkouts(contributions: readonly WorkoutContribution[]): WorkoutContribution[] {
  const byPriority = [...contributions].sort((a, b) => compareProviders(a.provider, b.provider));
  const kept = new Set<WorkoutContribution>();
  for (const w of byPriority) {
    const duplicate = [...kept].some((k) => providerId(k.provider) !== providerId(w.provider) && sameSession(k, w));
    if (!duplicate) kept.add(w);
  }
  return contributions.filter((w) => kept.has(w));
}
