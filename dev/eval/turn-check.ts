/**
 * What the eval reads off one ended turn: whether it routed as its pattern says, whether every number
 * of the answer traces (the fact-check's own `factCheckReply`, against the Turn's Fact Sheet, the
 * user's message and the Domain Expert's prose), what the service's `result.fact_check` reported, each
 * finding's reproduction-gate verdict, and each Fact Sheet number against the eval's own recomputation
 * from the rows (./recompute.ts).
 */
import type { TurnEvent, TurnEventType } from '../../contracts/event-data';
import type { FactEntry } from '../../contracts/turn';
import { factCheckReply } from '../../checks/fact-check';
import { citableNumbers } from '../../checks/personal-anchors';
import { extractNumbers } from '../../checks/numbers';
import type { AskedTurn } from './client';
import { EXPECTED_AGENTS, type AskedComputation, type EvalQuestion } from './questions';
import { agrees, parseWindowLabel, recomputeNumbers, type DailyCalendar, type NumberSpec } from './recompute';

/** The spec a Data Science plan states in its `== Spec ==` block, as the agent narrated it. */
interface PlanSpec {
  kind?: string;
  statistic?: string;
  feature?: string;
  target?: string;
  window_days?: string;
  offset_days?: string;
  since?: string;
}

interface NumberCheck {
  claim: string;
  value: number;
  /** null: no recomputation for this number (reason says why). */
  recomputed: number | null;
  reproduced: boolean | null;
  reason?: string;
}

export interface FindingCheck {
  id: string;
  /** `data_science`, `investigator` as the Fact Sheet names it, or `personal_anchor` for the coach's anchors. */
  source: string;
  /** The reproduction gate's verdict on the finding, when it ran. */
  reproductionGate: 'passed' | 'failed' | 'skipped' | null;
  /** From the Fact Sheet: numbers present and untagged, tagged conditional, or none (rejected / no numbers). */
  verdict: 'validated' | 'conditional' | 'absent';
  numbers: NumberCheck[];
  feature: string | null;
  target: string | null;
  /** rho, effect, change or difference, for a probe's sign. */
  direction: number | null;
}

export interface TurnCheck {
  turnId: string;
  status: string;
  agents: string[];
  routed: boolean | null;
  /** Numbers of the final answer the fact-check reads (list indices, years, dates and ids are not numbers). */
  numbersChecked: number;
  untraced: number[];
  /** Numbers that trace only because the user's message holds them, or only to the Domain Expert's prose. */
  tracedOnlyToMessage: number[];
  tracedOnlyToExpert: number[];
  serviceFactCheck: {
    numbersChecked: number;
    /** The first draft's untraced numbers. */
    issues: number[];
    resynthesised: boolean;
    removed: Array<{ value: number; sentence: string }>;
  } | null;
  findings: FindingCheck[];
  plan: PlanSpec | null;
  /** Whether the plan computed what the question asked (statistic, metric(s), window); null when not checkable. */
  computedAsAsked: { ok: boolean; why: string } | null;
  costUsd: number | null;
  wallMs: number;
  answer: string;
  factSheet: FactEntry[];
  /** What the Domain Expert said this turn (its narration): a reference the fact-check accepts. */
  expertProse: string;
}

/** The turn's events of one type, each typed as that event. */
const ofType = <T extends TurnEventType>(events: TurnEvent[], type: T) =>
  events.filter((e): e is Extract<TurnEvent, { type: T }> => e.type === type);

const thoughts = (events: TurnEvent[], agent: string, step?: string): string => {
  const mine = ofType(events, 'agent.thought').filter(
    (e) => e.data.agent === agent && (step === undefined || e.data.step === step),
  );
  // A retried step narrates again; its last attempt is the one that counted.
  const last = Math.max(0, ...mine.map((e) => e.data.attempt));
  return mine
    .filter((e) => e.data.attempt === last)
    .map((e) => e.data.delta)
    .join('');
};

function readPlan(events: TurnEvent[]): PlanSpec | null {
  const text = thoughts(events, 'data_science', 'ds_plan');
  const block = text.split('== Spec ==')[1];
  if (!block) return null;
  const spec: Record<string, string> = {};
  for (const line of block.split('\n')) {
    const m = /^\s*([a-z_]+):\s*(.+?)\s*$/.exec(line);
    if (m) spec[m[1]] = m[2];
  }
  return spec;
}

function checkAsked(asks: AskedComputation, plan: PlanSpec | null): { ok: boolean; why: string } {
  if (!plan) return { ok: false, why: 'no Data Science plan' };
  const problems: string[] = [];
  // A period against the one before it is the same computation whether the plan calls it a change or a
  // difference (the plan's kind says which: a trend); a weekend difference is a scalar.
  const statistic = plan.statistic === 'difference' && plan.kind === 'trend' ? 'change' : plan.statistic;
  if (statistic !== asks.statistic) problems.push(`statistic ${plan.statistic} (asked ${asks.statistic})`);
  const asked = [asks.feature, asks.target].filter(Boolean).sort().join('~');
  const computed = [plan.feature, plan.target === 'none' ? undefined : plan.target].filter(Boolean).sort().join('~');
  if (asked !== computed) problems.push(`metric ${computed} (asked ${asked})`);
  const w = asks.window;
  if ('since' in w) {
    if (!plan.since?.endsWith(w.since)) problems.push(`since ${plan.since} (asked ${w.since})`);
  } else {
    const days = plan.window_days === 'all' ? null : Number(plan.window_days);
    const offset = Number(plan.offset_days ?? 0);
    if (days !== w.days || offset !== (w.offset ?? 0)) {
      problems.push(
        `window ${plan.window_days ?? '?'}/${plan.offset_days ?? 0} (asked ${w.days ?? 'all'}/${w.offset ?? 0})`,
      );
    }
  }
  return { ok: problems.length === 0, why: problems.join('; ') };
}

const DIRECTION_KEYS = ['rho', 'effect', 'change', 'difference'];

/** The Fact Sheet's numbers grouped by finding (`ds-001.mean` → `ds-001`; `anchor.x_mean_14d` is its own). */
function groupSheet(sheet: FactEntry[]): Map<string, FactEntry[]> {
  const groups = new Map<string, FactEntry[]>();
  for (const entry of sheet) {
    const id = entry.claim.startsWith('anchor.')
      ? entry.claim.replace(/\.window_days(_\d+)?$/, '')
      : entry.claim.split('.')[0];
    groups.set(id, [...(groups.get(id) ?? []), entry]);
  }
  return groups;
}

const keyOf = (entry: FactEntry) => entry.claim.slice(entry.claim.lastIndexOf('.') + 1);
const isWindowLength = (entry: FactEntry) => /\.window_days(_\d+)?$/.test(entry.claim);

/** What was computed for a finding, from the sources the eval trusts for it; null when it cannot tell. */
function specOf(
  id: string,
  entries: FactEntry[],
  gate: TurnEvent<'validator.gate'> | undefined,
  plan: PlanSpec | null,
): { spec: NumberSpec | null; reason?: string; feature: string | null; target: string | null } {
  const label = entries[0]?.window ?? '';
  const window = parseWindowLabel(label);
  const keys = new Set(entries.map(keyOf));
  let statistic: string | undefined;
  let feature: string | null = null;
  let target: string | null = null;
  if (id.startsWith('anchor.')) {
    const m = /^anchor\.([a-z_]+)_(mean|change)_\d+d$/.exec(id);
    if (m) [feature, statistic] = [m[1], m[2]];
  } else if (id.startsWith('inv-')) {
    const parts = id.split('-');
    feature = parts[2] ?? null;
    target = parts[1] === 'association' ? (parts[3] ?? null) : null;
    statistic = gate?.data.detail ? String(gate.data.detail.statistic) : undefined;
  } else if (id.startsWith('ds-')) {
    feature = plan?.feature ?? null;
    target = plan?.target && plan.target !== 'none' ? plan.target : null;
    statistic = gate?.data.detail ? String(gate.data.detail.statistic) : undefined;
  }
  if (keys.has('weekend_mean') || keys.has('weekday_mean')) target = 'weekend';
  if (!feature) return { spec: null, reason: 'metric unknown', feature, target };
  if (!statistic) return { spec: null, reason: 'statistic unknown (no reproduction gate)', feature, target };
  if (!window) return { spec: null, reason: `window "${label}" not understood`, feature, target };
  return { spec: { statistic, feature, target, window }, feature, target };
}

export function checkTurn(
  question: Pick<EvalQuestion, 'text' | 'pattern' | 'asks'> & { scoreRouting?: boolean },
  { turn, events, wallMs }: AskedTurn,
  calendar: DailyCalendar,
): TurnCheck {
  const result = turn.result;
  // The coach's anchors are reproduced like the findings' numbers, though they are not on the fact sheet (turns
  // completed before they had a field of their own have them there, with this source).
  const anchorEntries: FactEntry[] = (result?.personal_anchors ?? []).map(({ claim, value, unit, n, window }) => ({
    claim,
    value,
    unit,
    source: 'personal_anchor',
    n,
    window,
  }));
  const sheetEntries = [...(result?.fact_sheet ?? []), ...anchorEntries];
  const sheet = result ? citableNumbers(result) : {};
  const answer = result?.answer ?? '';
  const expertProse = thoughts(events, 'domain_expert');
  const untracedWithout = (message: string, prose: string) =>
    result ? factCheckReply(answer, sheet, message, prose).map((i) => i.value) : [];
  const untraced = untracedWithout(question.text, expertProse);
  const beyond = (values: number[]) => values.filter((v) => !untraced.includes(v));
  const numbersChecked = extractNumbers(answer).filter((t) => t.notAQuantity === null).length;
  const agents = [...(result?.agents_used ?? [])].sort();
  const expected = [...EXPECTED_AGENTS[question.pattern]].sort();
  const plan = readPlan(events);

  const gates = ofType(events, 'validator.gate').filter((e) => e.data.gate === 'reproduction');
  const grouped = groupSheet(sheetEntries);
  const ids = new Set([...gates.map((g) => g.data.finding_id), ...grouped.keys()]);
  const findings: FindingCheck[] = [...ids].map((id) => {
    const entries = grouped.get(id) ?? [];
    const gate = gates.find((g) => g.data.finding_id === id);
    const { spec, reason, feature, target } = specOf(id, entries, gate, plan);
    const recomputed = spec ? recomputeNumbers(calendar, spec) : null;
    const numbers = entries
      .filter((e) => !isWindowLength(e))
      .map((e): NumberCheck => {
        // An anchor's one value is its claim's statistic: anchor.steps_mean_14d is the mean.
        const key = id.startsWith('anchor.') ? (spec?.statistic ?? '') : keyOf(e);
        const value = recomputed?.[key];
        if (value === undefined) {
          return {
            claim: e.claim,
            value: e.value,
            recomputed: null,
            reproduced: null,
            reason: reason ?? (recomputed ? `no recomputation of ${key}` : 'no data in the window'),
          };
        }
        return { claim: e.claim, value: e.value, recomputed: value, reproduced: agrees(e.value, value) };
      });
    const direction = entries.find((e) => DIRECTION_KEYS.includes(keyOf(e)))?.value ?? null;
    return {
      id,
      source: entries[0]?.source ?? (id.startsWith('inv-') ? 'investigator' : 'data_science'),
      reproductionGate: gate?.data.verdict ?? null,
      verdict:
        entries.length === 0
          ? 'absent'
          : entries.some((e) => e.verdict === 'conditional')
            ? 'conditional'
            : 'validated',
      numbers,
      feature,
      target,
      direction,
    };
  });

  const fc = result?.fact_check;
  return {
    turnId: turn.id,
    status: turn.status,
    agents,
    routed: question.scoreRouting === false || !result ? null : agents.join() === expected.join(),
    numbersChecked,
    untraced,
    tracedOnlyToMessage: beyond(untracedWithout('', expertProse)),
    tracedOnlyToExpert: beyond(untracedWithout(question.text, '')),
    serviceFactCheck: fc
      ? {
          numbersChecked: fc.numbers_checked,
          issues: fc.issues.map((i) => i.value),
          resynthesised: fc.repairs.resynthesised,
          removed: fc.repairs.removed.map(({ value, sentence }) => ({ value, sentence })),
        }
      : null,
    findings,
    plan,
    computedAsAsked: question.asks ? checkAsked(question.asks, plan) : null,
    costUsd: result?.cost_usd ?? null,
    wallMs,
    answer,
    factSheet: sheetEntries,
    expertProse,
  };
}
