/**
 * `npm run bench:pacing`'s computing and rendering (dev/bench/pacing-summary.ts, pacing-render.ts) on small
 * fixtures: a turn's model calls grouped into what ran side by side, the medians and verdicts per shape against
 * the targets and the contract's bands, and the markdown of a run's record and of docs/benchmarks.md's section.
 * Nothing here runs or times a turn.
 */
import { realisticPacing } from '../../dev/scripted-model/pacing';
import type { LedgerCall } from '../../dev/bench/pacing-ledger';
import { criticalPath, renderDocSection, renderRunRecord, type PacingRunInfo } from '../../dev/bench/pacing-render';
import { median, pathStages, summarisePacing, type TurnMeasurement } from '../../dev/bench/pacing-summary';
import { PACING_SHAPES, isAnswerDelta, type ShapeId } from '../../dev/bench/pacing-targets';
import type { MachineInfo } from '../../dev/bench/report';

const POST_AT = 1_700_000_000_000;

/** A call as [step, start in ms after the POST, duration in ms], optionally with its outcome. */
type CallSpec = [string, number, number, string?];

function measurement(
  shape: ShapeId,
  run: number,
  t: {
    firstWord: number | null;
    lastWord?: number | null;
    ended: number | null;
    outcome?: 'completed' | 'failed' | 'lost';
    reason?: string;
    agents?: string[];
    answerStep?: string;
    calls: CallSpec[];
  },
): TurnMeasurement {
  const outcome = t.outcome ?? 'completed';
  const calls: LedgerCall[] = t.calls.map(([step, start, duration, callOutcome]) => ({
    step,
    model: 'claude-sonnet-4-6',
    attempt: 1,
    outcome: callOutcome ?? 'success',
    startEpochMs: POST_AT + start,
    durationMs: duration,
    costUsd: 0.001,
  }));
  return {
    shape,
    run,
    client: {
      turnId: `turn_${shape}_${run}`,
      outcome,
      reason: t.reason ?? null,
      postAtEpochMs: POST_AT,
      firstWordMs: t.firstWord,
      lastWordMs: t.lastWord ?? t.firstWord,
      endedMs: t.ended,
      answerStep: t.firstWord === null ? null : (t.answerStep ?? 'synthesis'),
      agentsUsed: outcome === 'completed' ? (t.agents ?? PACING_SHAPES.find((s) => s.id === shape)!.agentsUsed) : null,
      stepRetries: 0,
    } as TurnMeasurement['client'],
    calls,
  };
}

/** The fallback turn as the service runs it today: four calls one after another. */
const FALLBACK_CALLS: CallSpec[] = [
  ['classify_vagueness', 500, 1900],
  ['route', 2500, 2400],
  ['fallback_reply', 4900, 5800],
  ['memory', 10900, 4200],
];

describe('the numbers', () => {
  test('the median of an even count is the mean of the two middle values', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow();
  });

  test('calls that overlap are one stage; calls that only touch are not', () => {
    const call = (step: string, startMs: number, durationMs: number) => ({
      step,
      model: 'm',
      attempt: 1,
      outcome: 'success',
      startMs,
      durationMs,
    });
    const stages = pathStages([
      call('critic', 2500, 1000),
      call('route', 1000, 500),
      call('classify_vagueness', 0, 1000),
      call('assessment', 2000, 3000),
      call('synthesis', 6000, 100),
    ]);
    expect(stages.map((s) => s.calls.map((c) => c.step))).toEqual([
      ['classify_vagueness'],
      ['route'],
      ['assessment', 'critic'],
      ['synthesis'],
    ]);
    expect(stages.map((s) => [s.startMs, s.endMs, s.gapBeforeMs])).toEqual([
      [0, 1000, 0],
      [1000, 1500, 0],
      [2000, 5000, 500],
      [6000, 6100, 1000],
    ]);
  });

  test('medians, ranges and verdicts per shape; the representative run is the one nearest the median', () => {
    const calls: CallSpec[] = [['domain_expert', 1000, 9000]];
    const [summary] = summarisePacing([
      measurement('data_domain', 1, { firstWord: 50_000, ended: 80_000, calls }),
      measurement('data_domain', 2, { firstWord: 40_000, ended: 60_000, calls }),
      measurement('data_domain', 3, { firstWord: 45_000, ended: 70_000, calls }),
    ]);
    expect(summary.shape.id).toBe('data_domain');
    expect(summary.firstWord).toEqual({ median: 45_000, min: 40_000, max: 50_000 });
    expect(summary.completed).toEqual({ median: 70_000, min: 60_000, max: 80_000 });
    expect(summary.modelCalls).toEqual({ median: 1, min: 1, max: 1 });
    expect(summary.verdict).toEqual({
      firstWord: false,
      completed: false,
      // Faster than the contract's band (90–180 s) is within it.
      band: { position: 'below', met: true },
      met: false,
    });
    expect(summary.representative?.run).toBe(3);
  });

  test('a shape whose medians meet its targets and band is met; a knowledge turn has no band', () => {
    const summaries = summarisePacing([
      measurement('fallback', 1, { firstWord: 1500, ended: 2500, calls: [['fallback_reply', 200, 2000]] }),
      measurement('knowledge', 1, { firstWord: 9000, ended: 29_000, calls: [['synthesis', 5000, 20_000]] }),
    ]);
    expect(summaries.map((s) => s.shape.id)).toEqual(['fallback', 'knowledge']);
    expect(summaries[0].verdict).toEqual({
      firstWord: true,
      completed: true,
      band: { position: 'inside', met: true },
      met: true,
    });
    expect(summaries[1].verdict).toEqual({ firstWord: true, completed: true, band: null, met: true });
  });

  test('a failed turn, or one that took another path, is left out of the medians and fails the verdict', () => {
    const fast = { firstWord: 1000, ended: 2000, calls: [['fallback_reply', 100, 1800]] as CallSpec[] };
    const [summary] = summarisePacing([
      measurement('fallback', 1, fast),
      measurement('fallback', 2, {
        ...fast,
        firstWord: null,
        ended: 9000,
        outcome: 'failed',
        reason: 'turn.failed: internal_error',
      }),
      measurement('fallback', 3, { ...fast, ended: 2400, agents: ['domain_expert'] }),
    ]);
    expect(summary.turns.map((t) => [t.run, t.counted, t.reason])).toEqual([
      [1, true, null],
      [2, false, 'turn.failed: internal_error'],
      [3, false, 'took another path'],
    ]);
    expect(summary.completed).toEqual({ median: 2000, min: 2000, max: 2000 });
    expect(summary.verdict.firstWord && summary.verdict.completed).toBe(true);
    expect(summary.verdict.met).toBe(false);
  });

  test('a turn: calls back to back, the time with no call running, the answer call and its first word', () => {
    const [summary] = summarisePacing([
      measurement('fallback', 1, {
        firstWord: 7600,
        lastWord: 10_700,
        ended: 15_200,
        answerStep: 'fallback_reply',
        calls: FALLBACK_CALLS,
      }),
    ]);
    const turn = summary.turns[0];
    expect(turn.modelCalls).toBe(4);
    expect(turn.backToBackMs).toBe(1900 + 2400 + 5800 + 4200);
    expect(turn.modelWallMs).toBe(14_300);
    expect(turn.betweenCallsMs).toBe(15_200 - 14_300);
    expect(turn.tailMs).toBe(15_200 - 15_100);
    expect(turn.costUsd).toBeCloseTo(0.004);
    expect(turn.answerCallStartMs).toBe(4900);
    expect(turn.firstWordAfterAnswerCallMs).toBe(2700);
    expect(summary.timeline.afterLastWord).toEqual({ median: 4500, min: 4500, max: 4500 });
  });

  test('the answer is the synthesis channel or the Investigator’s briefing, not its narration', () => {
    expect(isAnswerDelta({ agent: 'synthesis', step: 'fallback_reply' })).toBe(true);
    expect(isAnswerDelta({ agent: 'synthesis', step: 'synthesis' })).toBe(true);
    expect(isAnswerDelta({ agent: 'investigator', step: 'investigator_briefing' })).toBe(true);
    expect(isAnswerDelta({ agent: 'investigator', step: 'investigator_hypotheses' })).toBe(false);
    expect(isAnswerDelta({ agent: 'domain_expert', step: 'domain_expert' })).toBe(false);
  });
});

describe('the markdown', () => {
  const machine: MachineInfo = {
    cpu: 'Test CPU',
    cores: 2,
    memoryGb: 8,
    node: 'v20.0.0',
    postgres: 'PostgreSQL 17',
    temporal: 'server 1.32.0',
    load: [1, 1, 1],
    date: '2026-12-06T21:31:59Z',
  };
  const info: PacingRunInfo = {
    date: machine.date,
    machine,
    pacing: realisticPacing({}),
    runs: 1,
    warmup: 0,
    command: 'npm run bench:pacing --',
    code: 'abc1234',
    durationSeconds: 60,
    note: null,
  };
  const summaries = summarisePacing([
    measurement('fallback', 1, {
      firstWord: 7600,
      lastWord: 10_700,
      ended: 15_200,
      answerStep: 'fallback_reply',
      calls: FALLBACK_CALLS,
    }),
    measurement('data_lookup', 1, {
      firstWord: 30_000,
      ended: 50_000,
      calls: [
        ['ds_plan', 1000, 6000],
        ['critic', 10_000, 4000],
        ['assessment', 10_500, 3000],
        ['synthesis', 16_000, 14_000],
        ['memory', 30_500, 3000, 'overloaded'],
      ],
    }),
    measurement('knowledge', 1, {
      firstWord: null,
      ended: 9000,
      outcome: 'failed',
      reason: 'turn.failed: x',
      calls: [],
    }),
  ]);

  test('a critical path: calls in start order, side by side in brackets, long gaps shown', () => {
    expect(criticalPath(summaries[0].representative!)).toBe(
      '⋯0.5s⋯ → classify_vagueness 1.9s → route 2.4s → fallback_reply 5.8s (first word after 2.7s) → memory 4.2s',
    );
    expect(criticalPath(summaries[1].representative!)).toBe(
      '⋯1.0s⋯ → ds_plan 6.0s → ⋯3.0s⋯ → [critic 4.0s ∥ assessment 3.0s (from +0.5s)] → ⋯2.0s⋯ → ' +
        'synthesis 14.0s (first word after 14.0s) → ⋯0.5s⋯ → memory 3.0s (overloaded) → ⋯16.5s⋯',
    );
  });

  test('the record: verdicts, where the time goes, critical paths and every turn', () => {
    const record = renderRunRecord(info, summaries);
    expect(record).toMatch(/^# Answer latency under realistic pacing: run of 2026-12-06T21:31:59Z\n/);
    expect(record).toContain('Sonnet 1.8 s to the first token and 63 tokens/s, Opus 2.67 s and 45 tokens/s');
    expect(record).toMatch(/\| fallback +\| 7\.6 s +\| 2\.0 s: \*\*not met\*\* +\| 15\.2 s +\|/);
    expect(record).toContain('1.5 s–3.0 s: above');
    expect(record).toMatch(/\| knowledge +\| — +\|.*\| \*\*not met\*\* \(0 of 1 runs counted\) +\|/);
    expect(record).toContain('- **knowledge**: no turn completed on its path.');
    expect(record).toContain('### data lookup, run 1');
    expect(record).toMatch(/\| critic +\| claude-sonnet-4-6 \| 10\.0 s +\| 4\.0 s +\| 14\.0 s +\| assessment +\|/);
    expect(record).toContain('failed, not counted: turn.failed: x');
    for (const heading of ['## Verdicts', '## Where the time goes (medians)', '## Every turn', '## Targets']) {
      expect(record).toContain(`\n${heading}\n`);
    }
  });

  test('a median with its range, unless the range shows as one value', () => {
    const calls: CallSpec[] = [['fallback_reply', 100, 1800]];
    const section = renderDocSection(
      info,
      summarisePacing([
        measurement('fallback', 1, { firstWord: 7200, ended: 14_600, calls }),
        measurement('fallback', 2, { firstWord: 7600, ended: 14_640, calls }),
      ]),
      PACING_SHAPES,
      ['2026-12-06T21-31-59Z.md'],
    );
    expect(section).toMatch(/\| fallback +\| 7\.4 s \(7\.2 s–7\.6 s\) +\| 2\.0 s: \*\*not met\*\* +\| 14\.6 s +\|/);
  });

  test('the docs section: every shape’s targets, the latest verdicts and a link to each record', () => {
    const section = renderDocSection(info, summaries, PACING_SHAPES, [
      '2026-12-06T21-31-59Z.md',
      '2026-12-01T10-00-00Z.md',
    ]);
    expect(section).toMatch(
      /\| knowledge +\| "What is heart rate variability\?" +\| domain_expert +\| 10\.0 s +\| 30\.0 s +\| — +\|/,
    );
    expect(section).toMatch(/\| Investigator +\|.*\| 20\.0 s +\| 45\.0 s +\| 180\.0 s–360\.0 s +\|/);
    expect(section).toContain(
      'Latest run: 2026-12-06T21:31:59Z, 1 run(s) of each shape ([2026-12-06T21-31-59Z](benchmarks/pacing/2026-12-06T21-31-59Z.md)).',
    );
    expect(section).toContain(
      "Every run's record: [2026-12-06T21-31-59Z](benchmarks/pacing/2026-12-06T21-31-59Z.md), " +
        '[2026-12-01T10-00-00Z](benchmarks/pacing/2026-12-01T10-00-00Z.md).',
    );
    expect(section).toContain('- **fallback** (run 1: first word 7.6s, completed 15.2s): ⋯0.5s⋯ → classify_vagueness');
  });
});
