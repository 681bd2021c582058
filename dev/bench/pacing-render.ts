/**
 * `npm run bench:pacing`'s markdown, from its summary (./pacing-summary.ts) alone: the run's record (a file
 * of its own: the machine, the verdicts, where the time goes, each shape's critical path and every turn)
 * and the part of docs/benchmarks.md it rewrites (the targets, the latest verdicts, the links to the records).
 */
import type { Pacing } from '../scripted-model/pacing';
import type { PacingShape } from './pacing-targets';
import type { PathStage, ShapeSummary, Spread, TurnNumbers } from './pacing-summary';
import { machineRows, table, type MachineInfo } from './report';

export interface PacingRunInfo {
  /** ISO 8601, to the second. */
  date: string;
  machine: MachineInfo;
  pacing: Pacing;
  runs: number;
  warmup: number;
  command: string;
  code: string;
  durationSeconds: number;
  note: string | null;
}

/** A gap between model calls shorter than this is left out of a critical path's line (the columns count it). */
const GAP_SHOWN_MS = 300;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
/** The compact form for a critical path's line: `1.9s`. */
const short = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
const dollars = (usd: number) => `$${usd.toFixed(4)}`;
const metText = (met: boolean) => (met ? 'met' : '**not met**');

/** `33.8 s (31.2 s–35.0 s)`: the median and the range, unless the range shows as one value. */
function spreadText(s: Spread | null, format: (v: number) => string = seconds): string {
  if (!s) return '—';
  const [min, max] = [format(s.min), format(s.max)];
  return min === max ? format(s.median) : `${format(s.median)} (${min}–${max})`;
}

const count = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(1));

const bandText = (shape: PacingShape) =>
  shape.contractBandMs ? `${seconds(shape.contractBandMs.low)}–${seconds(shape.contractBandMs.high)}` : '—';

function targetsTable(shapes: readonly PacingShape[]): string {
  return table(
    ['Shape', 'Question', 'Agents', 'First word ≤', 'Completed ≤', "Contract's band"],
    shapes.map((shape) => [
      shape.label,
      `"${shape.question}"`,
      shape.agentsUsed.join(', ') || 'none',
      seconds(shape.firstWordTargetMs),
      seconds(shape.completedTargetMs),
      bandText(shape),
    ]),
  );
}

function verdictTable(summaries: readonly ShapeSummary[]): string {
  return table(
    [
      'Shape',
      'First word',
      'Target',
      'Completed',
      'Target',
      "Contract's band",
      'Model calls',
      'Back to back',
      'Cost',
      'Verdict',
    ],
    summaries.map((s) => {
      const counted = s.turns.filter((t) => t.counted).length;
      const runs = counted === s.turns.length ? '' : ` (${counted} of ${s.turns.length} runs counted)`;
      return [
        s.shape.label,
        spreadText(s.firstWord),
        `${seconds(s.shape.firstWordTargetMs)}: ${metText(s.verdict.firstWord)}`,
        spreadText(s.completed),
        `${seconds(s.shape.completedTargetMs)}: ${metText(s.verdict.completed)}`,
        s.verdict.band ? `${bandText(s.shape)}: ${s.verdict.band.position}` : '—',
        spreadText(s.modelCalls, count),
        spreadText(s.backToBack),
        spreadText(s.costUsd, dollars),
        metText(s.verdict.met) + runs,
      ];
    }),
  );
}

function timelineTable(summaries: readonly ShapeSummary[]): string {
  return table(
    [
      'Shape',
      'A model call running',
      'No model call running',
      "The answer's call starts",
      'Its first word after',
      'Last word → completed',
    ],
    summaries.map((s) => [
      s.shape.label,
      spreadText(s.timeline.modelWall),
      spreadText(s.timeline.betweenCalls),
      spreadText(s.timeline.answerCallStart),
      spreadText(s.timeline.firstWordAfterAnswerCall),
      spreadText(s.timeline.afterLastWord),
    ]),
  );
}

function callText(call: PathStage['calls'][number], stage: PathStage, turn: TurnNumbers, answerMarked: boolean) {
  const late = call.startMs - stage.startMs;
  const notes = [
    late >= 100 ? `from +${short(late)}` : null,
    call.outcome === 'success' ? null : call.outcome,
    answerMarked && turn.firstWordAfterAnswerCallMs !== null
      ? `first word after ${short(turn.firstWordAfterAnswerCallMs)}`
      : null,
  ].filter(Boolean);
  const attempt = call.attempt > 1 ? ` (attempt ${call.attempt})` : '';
  return `${call.step}${attempt} ${short(call.durationMs)}${notes.length ? ` (${notes.join(', ')})` : ''}`;
}

/**
 * A turn's model calls as one line, in start order: `classify_vagueness 1.9s → route 2.4s → [a 4.0s ∥ b 3.1s]
 * → ⋯1.2s⋯ → synthesis 14.3s (first word after 6.0s)`. Calls that overlapped are bracketed together; `⋯n⋯`
 * is time with no model call running (the service's own work, or waiting).
 */
export function criticalPath(turn: TurnNumbers): string {
  const items: string[] = [];
  let answerMarked = false;
  for (const stage of turn.stages) {
    if (stage.gapBeforeMs >= GAP_SHOWN_MS) items.push(`⋯${short(stage.gapBeforeMs)}⋯`);
    const calls = stage.calls.map((call) => {
      const mark = !answerMarked && call.step === turn.answerStep;
      answerMarked ||= mark;
      return callText(call, stage, turn, mark);
    });
    items.push(calls.length === 1 ? calls[0] : `[${calls.join(' ∥ ')}]`);
  }
  if (turn.tailMs !== null && turn.tailMs >= GAP_SHOWN_MS) items.push(`⋯${short(turn.tailMs)}⋯`);
  return items.join(' → ');
}

function criticalPaths(summaries: readonly ShapeSummary[]): string[] {
  return summaries.map((s) => {
    const t = s.representative;
    if (!t) return `- **${s.shape.label}**: no turn completed on its path.`;
    return (
      `- **${s.shape.label}** (run ${t.run}: first word ${short(t.firstWordMs ?? 0)}, ` +
      `completed ${short(t.completedMs ?? 0)}): ${criticalPath(t)}`
    );
  });
}

const optional = (ms: number | null) => (ms === null ? '—' : seconds(ms));

function turnsTable(summaries: readonly ShapeSummary[]): string {
  return table(
    [
      'Shape',
      'Run',
      'Turn',
      'Outcome',
      'First word',
      'Last word',
      'Completed',
      'Model calls',
      'Back to back',
      'No model call running',
      'Cost',
      'Step retries',
    ],
    summaries.flatMap((s) =>
      s.turns.map((t) => [
        s.shape.label,
        String(t.run),
        t.turnId ? `\`${t.turnId}\`` : '—',
        t.counted ? t.outcome : `${t.outcome}, not counted${t.reason ? `: ${t.reason}` : ''}`,
        optional(t.firstWordMs),
        optional(t.lastWordMs),
        optional(t.completedMs),
        String(t.modelCalls),
        seconds(t.backToBackMs),
        optional(t.betweenCallsMs),
        dollars(t.costUsd),
        String(t.stepRetries),
      ]),
    ),
  );
}

/** Each representative turn's calls, one row each: which model, when, how long, and beside which others. */
function callTables(summaries: readonly ShapeSummary[]): string[] {
  return summaries.flatMap((s) => {
    const t = s.representative;
    if (!t) return [];
    const rows = t.stages.flatMap((stage) =>
      stage.calls.map((call) => [
        call.step + (call.attempt > 1 ? ` (attempt ${call.attempt})` : ''),
        call.model,
        seconds(call.startMs),
        seconds(call.durationMs),
        seconds(call.startMs + call.durationMs),
        stage.calls.length > 1
          ? stage.calls
              .filter((other) => other !== call)
              .map((other) => other.step)
              .join(', ')
          : '',
        call.inputTokens === undefined ? '' : String(call.inputTokens),
        call.outcome,
      ]),
    );
    return [
      `### ${s.shape.label}, run ${t.run}`,
      '',
      table(['Call', 'Model', 'Starts', 'Lasts', 'Ends', 'Beside', 'Prompt tokens', 'Outcome'], rows),
      '',
    ];
  });
}

function pacingText(pacing: Pacing): string {
  const { opus, sonnet } = pacing.speeds;
  // The time to first token as given (2.67 s), not rounded to a tenth like the measurements.
  const ttft = (ms: number) => `${ms / 1000} s`;
  return (
    `realistic: Sonnet ${ttft(sonnet.firstTokenMs)} to the first token and ${sonnet.tokensPerSecond} tokens/s, ` +
    `Opus ${ttft(opus.firstTokenMs)} and ${opus.tokensPerSecond} tokens/s, ${pacing.tokensPerDelta} tokens per delta, ` +
    `output lengths × ${pacing.outputScale}`
  );
}

const LEGEND = [
  '- **First word**: from just before `POST /v1/turns` to the first `agent.thought` delta of the answer the client ' +
    "received (agent `synthesis`, which the conversational reply streams on too, or the Investigator's " +
    '`investigator_briefing`). **Completed**: to `turn.completed`. Medians over the runs, the range in brackets.',
  '- **Model calls**, **back to back** (their durations added up) and **cost** (`cost_usd` added up) are the ' +
    "`llm_calls` ledger's rows of the turn, failed attempts included. A call's start is its end (`created_at`) " +
    'less its `duration_ms`.',
  '- A verdict is met when every run completed on its path and the medians meet both targets and stay within the ' +
    "contract's band (faster than the band is no failure).",
  '- In a critical path, `[a ∥ b]` are calls that ran side by side, `from +n` when one started later than the ' +
    'first of its group, and `⋯n⋯` a stretch of at least 0.3 s with no model call running.',
];

/** The run's record: a file of its own under docs/benchmarks/pacing/. */
export function renderRunRecord(info: PacingRunInfo, summaries: readonly ShapeSummary[]): string {
  return [
    `# Answer latency under realistic pacing: run of ${info.date}`,
    '',
    'Written by `npm run bench:pacing` ([the method](../../benchmarks.md#answer-latency-under-realistic-pacing-npm-run-benchpacing)).',
    '',
    table(
      ['Run', ''],
      [
        ['Command', `\`${info.command}\``],
        ['Code', info.code],
        ['Pacing', pacingText(info.pacing)],
        ['Turns', `${info.runs} run(s) of each shape, one turn at a time, after ${info.warmup} warm-up turn(s)`],
        ...machineRows(info.machine),
        ['Load average', `${info.machine.load.map((l) => l.toFixed(2)).join(', ')} (1, 5, 15 min, as the run ended)`],
        ['Duration', `${info.durationSeconds.toFixed(0)} s`],
        ...(info.note ? [['Note', info.note]] : []),
      ],
    ),
    '',
    '## Verdicts',
    '',
    verdictTable(summaries),
    '',
    ...LEGEND,
    '',
    '## Where the time goes (medians)',
    '',
    timelineTable(summaries),
    '',
    '## Critical paths (the run nearest the median completion)',
    '',
    ...criticalPaths(summaries),
    '',
    ...callTables(summaries),
    '## Every turn',
    '',
    turnsTable(summaries),
    '',
    '## Targets',
    '',
    targetsTable(summaries.map((s) => s.shape)),
    '',
  ].join('\n');
}

/**
 * The generated part of docs/benchmarks.md's section: the targets, the latest verdicts and critical paths,
 * and the links to every record (`records`: file names under docs/benchmarks/pacing/, newest first).
 */
export function renderDocSection(
  info: PacingRunInfo,
  summaries: readonly ShapeSummary[],
  shapes: readonly PacingShape[],
  records: readonly string[],
): string {
  const link = (file: string) => `[${file.replace(/\.md$/, '')}](benchmarks/pacing/${file})`;
  return [
    targetsTable(shapes),
    '',
    `Latest run: ${info.date}, ${info.runs} run(s) of each shape (${link(records[0])}).`,
    '',
    verdictTable(summaries),
    '',
    'Critical paths (the run nearest the median completion):',
    '',
    ...criticalPaths(summaries),
    '',
    `Every run's record: ${records.map(link).join(', ')}.`,
  ].join('\n');
}
