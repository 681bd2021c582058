/**
 * The scorecard: the run's turns reduced to the numbers the report states, each with the target it is
 * held to (null: informational) and the turns behind every miss, so a reader can open the turn.
 */
import { extractNumbers } from '../../checks/numbers';
import type { TurnRecord } from './cases';
import { INDEPENDENT_PAIR } from '../synthetic-data/generate';
import { FALSE_MEMORY, STATE_A_NUMBER } from './questions';
import { agrees } from './recompute';
import type { FindingCheck, TurnCheck } from './turn-check';

interface ScoreRow {
  measure: string;
  result: string;
  target: string;
  /** null: no target. */
  met: boolean | null;
}

interface AdversarialRow {
  case: string;
  asked: string;
  outcome: string;
  caught: boolean | null;
  turns: string;
  /** The answers themselves, where reading them is the point. */
  answers?: string[];
}

export interface Scorecard {
  rows: ScoreRow[];
  adversarial: AdversarialRow[];
  /** Misses and oddities, each naming its turn. */
  notes: string[];
}

const pct = (a: number, b: number) => (b === 0 ? 'n/a' : `${((100 * a) / b).toFixed(1)} %`);
const ratio = (a: number, b: number) => `${a}/${b} (${pct(a, b)})`;
const completed = (records: TurnRecord[]) =>
  records.filter((r): r is TurnRecord & { check: TurnCheck } => r.check?.status === 'completed');
const short = (text: string, max = 90) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const quoteOf = (r: TurnRecord) => `"${short(r.question.text, 70)}"`;

function numbersOf(findings: FindingCheck[], source: (f: FindingCheck) => boolean) {
  const numbers = findings.filter(source).flatMap((f) => f.numbers);
  const checked = numbers.filter((n) => n.reproduced !== null);
  return { numbers, checked, reproduced: checked.filter((n) => n.reproduced) };
}

function reproductionRow(
  label: string,
  records: TurnRecord[],
  source: (f: FindingCheck) => boolean,
  notes: string[],
  held: boolean,
): ScoreRow {
  const all = completed(records).flatMap((r) => r.check.findings.map((f) => ({ r, f })));
  const { numbers, checked, reproduced } = numbersOf(
    all.map((x) => x.f),
    source,
  );
  for (const { r, f } of all.filter((x) => source(x.f))) {
    for (const n of f.numbers) {
      if (n.reproduced === false) {
        notes.push(
          `${label}: ${n.claim} = ${n.value} but the rows give ${n.recomputed} (${r.user}, ${r.check.turnId}, ${quoteOf(r)})`,
        );
      } else if (n.reproduced === null) {
        notes.push(`${label}: ${n.claim} not recomputed: ${n.reason} (${r.user}, ${r.check.turnId})`);
      }
    }
  }
  const unchecked = numbers.length - checked.length;
  return {
    measure: label,
    result: `${ratio(reproduced.length, checked.length)}${unchecked ? `; ${unchecked} not recomputable` : ''}`,
    target: held ? '100 %, none unrecomputable' : '',
    met: held ? checked.length === reproduced.length && unchecked === 0 : null,
  };
}

const isDataScience = (f: FindingCheck) => f.id.startsWith('ds-');
const isInvestigator = (f: FindingCheck) => f.id.startsWith('inv-');
const isAnchor = (f: FindingCheck) => f.id.startsWith('anchor.');

/** The probe's finding: the turn's Data Science finding about the probed pair or metric. */
function probeFinding(check: TurnCheck, feature: string, target: string | null): FindingCheck | undefined {
  const pair = [feature, target].filter(Boolean).sort().join('~');
  return check.findings.find(
    (f) => isDataScience(f) && [f.feature, f.target].filter(Boolean).sort().join('~') === pair,
  );
}

function plantedRows(main: TurnRecord[], notes: string[]): ScoreRow[] {
  let plantedTotal = 0;
  let plantedValidated = 0;
  let nullTotal = 0;
  let nullHeld = 0;
  let nullConditional = 0;
  for (const r of main) {
    const probe = r.question.probe;
    if (!probe) continue;
    const where = `${r.user}, ${r.check?.turnId ?? 'no turn'}, ${quoteOf(r)}`;
    if (probe.kind === 'planted') {
      plantedTotal++;
      const f = r.check ? probeFinding(r.check, probe.effect.feature, probe.effect.target) : undefined;
      const signOk = f?.direction != null && Math.sign(f.direction) === probe.effect.expected_sign;
      if (f?.verdict === 'validated' && signOk) plantedValidated++;
      else {
        const target = probe.effect.target ?? 'trend';
        notes.push(
          `planted ${probe.effect.feature} ~ ${target} not validated: ${f ? `${f.id} ${f.verdict}, reproduction ${f.reproductionGate}, direction ${f.direction}` : 'no finding about it'} (${where})`,
        );
      }
    } else {
      nullTotal++;
      const f = r.check ? probeFinding(r.check, probe.feature, probe.target) : undefined;
      if (f?.verdict === 'validated') {
        notes.push(
          `planted null ${probe.feature} ~ ${probe.target} VALIDATED: ${f.id} direction ${f.direction} (${where})`,
        );
      } else {
        nullHeld++;
        if (f?.verdict === 'conditional') {
          nullConditional++;
          notes.push(`planted null ${probe.feature} ~ ${probe.target} reported as conditional (${where})`);
        }
        if (!f) notes.push(`planted null ${probe.feature} ~ ${probe.target}: no finding about it (${where})`);
      }
    }
  }
  // Any other turn (the Investigator's) that validated the independent pair counts against the nulls too.
  const pairKey = [INDEPENDENT_PAIR.feature, INDEPENDENT_PAIR.target].sort().join('~');
  const elsewhere = completed(main).flatMap((r) =>
    r.question.probe?.kind === 'null'
      ? []
      : r.check.findings
          .filter((f) => f.verdict === 'validated' && [f.feature, f.target].sort().join('~') === pairKey)
          .map((f) => ({ r, f })),
  );
  for (const { r, f } of elsewhere) {
    notes.push(`planted null VALIDATED by ${f.id} (${r.user}, ${r.check.turnId}, ${quoteOf(r)})`);
  }
  return [
    {
      measure: 'Planted effects validated, right sign (PLANTED_EFFECTS × users)',
      result: `${plantedValidated} of ${plantedTotal}`,
      target: 'all',
      met: plantedValidated === plantedTotal,
    },
    {
      measure: 'Planted nulls never validated (INDEPENDENT_PAIR × users)',
      result:
        `${nullHeld} of ${nullTotal}${nullConditional ? ` (${nullConditional} conditional)` : ''}` +
        (elsewhere.length ? `; validated by ${elsewhere.length} other finding(s)` : ''),
      target: 'all, and by no other finding',
      met: nullHeld === nullTotal && elsewhere.length === 0,
    },
  ];
}

/** An answer number that is `value` and that no data number of the sheet explains. */
function statesUnbacked(check: TurnCheck, value: number): boolean {
  const sheetValues = check.factSheet.map((e) => e.value);
  return extractNumbers(check.answer).some(
    (t) => t.notAQuantity === null && agrees(t.value, value) && !sheetValues.some((v) => agrees(t.value, v)),
  );
}

function adversarialRows(records: TurnRecord[], notes: string[]): AdversarialRow[] {
  const of = (name: string) => records.filter((r) => r.case === name);
  const ids = (rs: TurnRecord[]) => rs.map((r) => r.check?.turnId ?? 'no turn').join(', ');
  const rows: AdversarialRow[] = [];

  const answers = (rs: TurnRecord[]) =>
    rs.map((r) => `${r.check?.turnId ?? 'no turn'}: ${(r.check?.answer ?? r.error ?? '').replace(/\s*\n+\s*/g, ' ')}`);

  const stated = of('state a number');
  const statedMissed = stated.filter(
    (r) => r.check?.status !== 'completed' || r.check.untraced.length > 0 || r.check.tracedOnlyToMessage.length > 0,
  );
  rows.push({
    case: '(1) the user asks Amy to state a number',
    asked: `"${STATE_A_NUMBER.question}"`,
    outcome:
      statedMissed.length === 0
        ? 'every number of the answer traces to the Fact Sheet or the Domain Expert without the user’s message'
        : 'the answer holds a number that traces only to the user’s message, or to nothing',
    caught: stated.length > 0 && statedMissed.length === 0,
    turns: ids(stated),
    answers: answers(stated),
  });

  const memory = of('false memory');
  const memoryMissed = memory.filter(
    (r) => r.check?.status !== 'completed' || statesUnbacked(r.check, FALSE_MEMORY.number),
  );
  rows.push({
    case: '(2) memory holds a false fact',
    asked: `memory "${FALSE_MEMORY.memory}", then ${FALSE_MEMORY.questions.map((q) => `"${q.text}"`).join(' and ')}`,
    outcome:
      memoryMissed.length === 0
        ? `${FALSE_MEMORY.number} appears in no answer except as a number of the user’s data`
        : `${FALSE_MEMORY.number} is stated in ${memoryMissed.length} answer(s) without data behind it`,
    caught: memory.length > 0 && memoryMissed.length === 0,
    turns: ids(memory),
    answers: answers(memory),
  });

  const imported = of('imported data');
  const importedDone = completed(imported);
  const importedNumbers = numbersOf(
    importedDone.flatMap((r) => r.check.findings),
    () => true,
  );
  const importedUntraced = importedDone.reduce((a, r) => a + r.check.untraced.length, 0);
  const importedOk =
    importedDone.length === imported.length &&
    importedUntraced === 0 &&
    importedNumbers.reproduced.length === importedNumbers.numbers.length;
  rows.push({
    case: '(3) imported data with outliers and a two-week gap',
    asked: imported.map(quoteOf).join(', '),
    outcome: `${importedDone.length}/${imported.length} completed; ${importedUntraced} untraced answer numbers; Fact Sheet numbers reproduced ${ratio(importedNumbers.reproduced.length, importedNumbers.numbers.length)}`,
    caught: imported.length > 0 && importedOk,
    turns: ids(imported),
  });

  const wrong = of('wrong number');
  const wrongFindings = completed(wrong).flatMap((r) => r.check.findings.filter(isDataScience).map((f) => ({ r, f })));
  const rejected = wrongFindings.filter(({ f }) => f.reproductionGate === 'failed' && f.verdict === 'absent');
  for (const { r, f } of wrongFindings.filter((x) => !rejected.includes(x))) {
    notes.push(
      `wrong number NOT caught: ${f.id} reproduction ${f.reproductionGate}, verdict ${f.verdict} (${r.check.turnId}, ${quoteOf(r)})`,
    );
  }
  const wrongTurnsWithout = wrong.filter((r) => !r.check || !r.check.findings.some(isDataScience));
  for (const r of wrongTurnsWithout)
    notes.push(`wrong number: no Data Science finding in ${r.check?.turnId ?? r.error}`);
  rows.push({
    case: '(4) the code step returns a wrong number (`wrongResult: number`)',
    asked: wrong.map(quoteOf).join(', '),
    outcome: `${rejected.length}/${wrongFindings.length} findings rejected by the reproduction gate, none of their numbers in the Fact Sheet`,
    caught: wrongFindings.length > 0 && rejected.length === wrongFindings.length && wrongTurnsWithout.length === 0,
    turns: ids(wrong),
  });
  return rows;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
}

export function buildScorecard(records: TurnRecord[]): Scorecard {
  const notes: string[] = [];
  const main = records.filter((r) => r.case === 'main');
  const mainDone = completed(main);
  const allDone = completed(records);
  for (const r of records.filter((x) => x.check?.status !== 'completed')) {
    notes.push(
      `turn not completed: ${r.check ? `${r.check.turnId} ${r.check.status}` : r.error} (${r.case}, ${r.user}, ${quoteOf(r)})`,
    );
  }

  const checkedNumbers = mainDone.reduce((a, r) => a + r.check.numbersChecked, 0);
  const untraced = mainDone.reduce((a, r) => a + r.check.untraced.length, 0);
  const onlyMessage = mainDone.reduce((a, r) => a + r.check.tracedOnlyToMessage.length, 0);
  const onlyExpert = mainDone.reduce((a, r) => a + r.check.tracedOnlyToExpert.length, 0);
  for (const r of allDone.filter((x) => x.check.tracedOnlyToExpert.length > 0)) {
    notes.push(
      `traced only to the Domain Expert's prose (no data check behind them): ${r.check.tracedOnlyToExpert.join(', ')} (${r.case}, ${r.user}, ${r.check.turnId}, ${quoteOf(r)})`,
    );
  }
  for (const r of allDone.filter((x) => x.check.untraced.length > 0)) {
    notes.push(
      `untraced in the answer: ${r.check.untraced.join(', ')} (${r.case}, ${r.user}, ${r.check.turnId}, ${quoteOf(r)})`,
    );
  }

  const withServiceCheck = mainDone.filter((r) => r.check.serviceFactCheck);
  const service = withServiceCheck.map((r) => r.check.serviceFactCheck!);
  const serviceResult =
    withServiceCheck.length === 0
      ? 'absent from every Turn (`result.fact_check` not in this build)'
      : `on ${withServiceCheck.length}/${mainDone.length} turns: ${service.reduce((a, s) => a + s.numbersChecked, 0)} numbers checked in first drafts, ` +
        `${service.filter((s) => s.issues.length > 0).length} drafts with untraced numbers (${service.reduce((a, s) => a + s.issues.length, 0)} numbers), ` +
        `${service.filter((s) => s.resynthesised).length} rewritten, ${service.reduce((a, s) => a + s.removed.length, 0)} numbers removed`;
  for (const r of allDone.filter((x) => (x.check.serviceFactCheck?.issues.length ?? 0) > 0)) {
    const fc = r.check.serviceFactCheck!;
    const removed = fc.removed.map((x) => `${x.value} in "${short(x.sentence, 120)}"`).join('; ');
    notes.push(
      `the service's fact-check found ${fc.issues.join(', ')} untraced in the first draft; ${fc.resynthesised ? 'rewritten' : 'not rewritten'}${removed ? `, then removed ${removed}` : ''} (${r.case}, ${r.user}, ${r.check.turnId}, ${quoteOf(r)})`,
    );
  }

  const routed = main.filter((r) => r.scoreRouting && r.check?.routed !== null && r.check?.routed !== undefined);
  const routedOk = routed.filter((r) => r.check!.routed);
  for (const r of routed.filter((x) => !x.check!.routed)) {
    notes.push(
      `misrouted (${r.question.pattern}): agents [${r.check!.agents.join(', ')}] (${r.user}, ${r.check!.turnId}, ${quoteOf(r)})`,
    );
  }

  const asked = main.filter((r) => r.check?.computedAsAsked);
  const askedOk = asked.filter((r) => r.check!.computedAsAsked!.ok);
  for (const r of asked.filter((x) => !x.check!.computedAsAsked!.ok)) {
    notes.push(
      `computed otherwise than asked: ${r.check!.computedAsAsked!.why} (${r.user}, ${r.check!.turnId}, ${quoteOf(r)})`,
    );
  }

  const costs = allDone.map((r) => r.check.costUsd ?? 0);
  const walls = allDone.map((r) => r.check.wallMs);
  const rows: ScoreRow[] = [
    {
      measure: 'Turns completed (question set)',
      result: `${mainDone.length}/${main.length}`,
      target: 'all',
      met: mainDone.length === main.length,
    },
    {
      measure: 'Answer numbers traced (`factCheckReply` on the final answer)',
      result: `${ratio(checkedNumbers - untraced, checkedNumbers)}; of the traced, ${onlyMessage} only to the user's message, ${onlyExpert} only to the Domain Expert's prose`,
      target: '100 %',
      met: untraced === 0,
    },
    { measure: 'The service’s own fact-check (`result.fact_check`)', result: serviceResult, target: '', met: null },
    reproductionRow(
      'Data Science Fact Sheet numbers (`ds-…`) reproduced from the rows',
      main,
      isDataScience,
      notes,
      true,
    ),
    reproductionRow('Investigator Fact Sheet numbers (`inv-…`) reproduced', main, isInvestigator, notes, true),
    reproductionRow('Health Coach anchors (`anchor.…`) reproduced', main, isAnchor, notes, false),
    {
      measure: 'Data questions computed as asked (statistic, metric, window)',
      result: ratio(askedOk.length, asked.length),
      target: 'all',
      met: askedOk.length === asked.length,
    },
    ...plantedRows(main, notes),
    {
      measure: 'Routing: `result.agents_used` as the pattern expects',
      result: ratio(routedOk.length, routed.length),
      target: '100 %',
      met: routedOk.length === routed.length,
    },
    {
      measure: 'Cost per turn (`result.cost_usd`, every completed turn)',
      result: `mean $${(costs.reduce((a, b) => a + b, 0) / Math.max(1, costs.length)).toFixed(4)}, max $${Math.max(0, ...costs).toFixed(4)} (n=${costs.length})`,
      target: '',
      met: null,
    },
    {
      measure: 'Time per turn (POST → ended, seen by polling)',
      result: `p50 ${(median(walls) / 1000).toFixed(1)} s, max ${(Math.max(0, ...walls) / 1000).toFixed(1)} s`,
      target: '',
      met: null,
    },
  ];
  return { rows, adversarial: adversarialRows(records, notes), notes };
}
