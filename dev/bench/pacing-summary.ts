/**
 * `npm run bench:pacing`'s numbers, computed from what it measured and nothing else (no clock, no I/O),
 * so that they can be checked on small fixtures: each turn's times, model calls and critical path, and
 * each shape's medians over its runs with their verdicts against the targets and the contract's band
 * (./pacing-targets.ts).
 */
import type { LedgerCall } from './pacing-ledger';
import { PACING_SHAPES, type PacingShape, type ShapeId } from './pacing-targets';
import type { ClientObservation } from './pacing-turn';

/** One measured turn: what the client saw and what the ledger recorded. */
export interface TurnMeasurement {
  shape: ShapeId;
  /** 1-based. */
  run: number;
  client: ClientObservation;
  calls: LedgerCall[];
}

/** A model call on the turn's timeline, in ms from the POST. */
export interface PathCall {
  step: string;
  model: string;
  attempt: number;
  outcome: string;
  startMs: number;
  durationMs: number;
  /** The prompt's length, from the ledger. */
  inputTokens?: number;
}

/**
 * Calls whose times overlap (each starts before the others before it have all ended): one call alone, or
 * calls that ran side by side. A turn's stages follow one another with no model call between them.
 */
export interface PathStage {
  calls: PathCall[];
  startMs: number;
  endMs: number;
  /** From the previous stage's end (the POST for the first stage) to this one's start: no model call ran. */
  gapBeforeMs: number;
}

export interface TurnNumbers {
  shape: ShapeId;
  run: number;
  turnId: string | null;
  outcome: ClientObservation['outcome'];
  reason: string | null;
  /** Completed, on the shape's path (its agents), with an answer delta received: counted in the medians. */
  counted: boolean;
  agentsUsed: string[] | null;
  firstWordMs: number | null;
  lastWordMs: number | null;
  completedMs: number | null;
  modelCalls: number;
  /** The calls' durations added up: the turn's length if every call waited for the one before. */
  backToBackMs: number;
  /** The time at least one call was running (the stages' lengths added up). */
  modelWallMs: number;
  /** From the POST to `turn.completed` with no model call running: the service's own work and waits. */
  betweenCallsMs: number | null;
  costUsd: number;
  stages: PathStage[];
  /** From the last call's end to `turn.completed`. */
  tailMs: number | null;
  answerStep: string | null;
  /** When the first call of the answer's step started, and from then to the first answer delta. */
  answerCallStartMs: number | null;
  firstWordAfterAnswerCallMs: number | null;
  stepRetries: number;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** Where the median turn's length falls against the contract's band. */
type BandPosition = 'below' | 'inside' | 'above';

export interface ShapeSummary {
  shape: PacingShape;
  turns: TurnNumbers[];
  /** Over the counted turns only; null when none was counted. */
  firstWord: Spread | null;
  completed: Spread | null;
  modelCalls: Spread | null;
  backToBack: Spread | null;
  costUsd: Spread | null;
  /** Where the time goes, over the counted turns. */
  timeline: {
    modelWall: Spread | null;
    betweenCalls: Spread | null;
    /** When the answer's model call started, and from then to the first answer delta. */
    answerCallStart: Spread | null;
    firstWordAfterAnswerCall: Spread | null;
    /** From the last answer delta to `turn.completed`: what still runs once the answer is out. */
    afterLastWord: Spread | null;
  };
  verdict: {
    firstWord: boolean;
    completed: boolean;
    /** Null where the contract gives no band for the shape. */
    band: { position: BandPosition; met: boolean } | null;
    /** Every run counted, and every target and the band met by the medians. */
    met: boolean;
  };
  /** The counted turn whose completion is nearest the median: the one whose critical path the report shows. */
  representative: TurnNumbers | null;
}

/** The middle value; for an even count, the mean of the two middle ones. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const spread = (values: readonly number[]): Spread | null =>
  values.length === 0 ? null : { median: median(values), min: Math.min(...values), max: Math.max(...values) };

/** Groups the calls, in start order, into stages of calls that overlap. */
export function pathStages(calls: readonly PathCall[]): PathStage[] {
  const stages: PathStage[] = [];
  for (const call of [...calls].sort((a, b) => a.startMs - b.startMs)) {
    const endMs = call.startMs + call.durationMs;
    const current = stages[stages.length - 1];
    if (current && call.startMs < current.endMs) {
      current.calls.push(call);
      current.endMs = Math.max(current.endMs, endMs);
      continue;
    }
    stages.push({ calls: [call], startMs: call.startMs, endMs, gapBeforeMs: call.startMs - (current?.endMs ?? 0) });
  }
  return stages;
}

const sameAgents = (a: readonly string[], b: readonly string[]) => [...a].sort().join() === [...b].sort().join();

function turnNumbers(m: TurnMeasurement, shape: PacingShape): TurnNumbers {
  const { client } = m;
  const calls: PathCall[] = m.calls.map((call) => ({
    step: call.step,
    model: call.model,
    attempt: call.attempt,
    outcome: call.outcome,
    startMs: call.startEpochMs - client.postAtEpochMs,
    durationMs: call.durationMs,
    ...(call.inputTokens === undefined ? {} : { inputTokens: call.inputTokens }),
  }));
  const stages = pathStages(calls);
  const modelWallMs = stages.reduce((sum, stage) => sum + stage.endMs - stage.startMs, 0);
  const completedMs = client.outcome === 'completed' ? client.endedMs : null;
  const lastEnd = stages.length ? stages[stages.length - 1].endMs : 0;
  const answerCall = client.answerStep ? calls.find((call) => call.step === client.answerStep) : undefined;
  const onPath = client.agentsUsed !== null && sameAgents(client.agentsUsed, shape.agentsUsed);
  return {
    shape: m.shape,
    run: m.run,
    turnId: client.turnId,
    outcome: client.outcome,
    reason: client.reason ?? (client.outcome === 'completed' && !onPath ? 'took another path' : null),
    counted: completedMs !== null && onPath && client.firstWordMs !== null,
    agentsUsed: client.agentsUsed,
    firstWordMs: client.firstWordMs,
    lastWordMs: client.lastWordMs,
    completedMs,
    modelCalls: calls.length,
    backToBackMs: calls.reduce((sum, call) => sum + call.durationMs, 0),
    modelWallMs,
    betweenCallsMs: completedMs === null ? null : completedMs - modelWallMs,
    costUsd: m.calls.reduce((sum, call) => sum + call.costUsd, 0),
    stages,
    tailMs: completedMs === null ? null : completedMs - lastEnd,
    answerStep: client.answerStep,
    answerCallStartMs: answerCall?.startMs ?? null,
    firstWordAfterAnswerCallMs:
      answerCall && client.firstWordMs !== null ? client.firstWordMs - answerCall.startMs : null,
    stepRetries: client.stepRetries,
  };
}

function bandVerdict(shape: PacingShape, completed: Spread | null): ShapeSummary['verdict']['band'] {
  if (!shape.contractBandMs) return null;
  if (!completed) return { position: 'above', met: false };
  const { low, high } = shape.contractBandMs;
  const position: BandPosition = completed.median < low ? 'below' : completed.median <= high ? 'inside' : 'above';
  // Faster than the band is no failure: the band says how long the contract allows, the targets ask for less.
  return { position, met: completed.median <= high };
}

function summariseShape(shape: PacingShape, measurements: readonly TurnMeasurement[]): ShapeSummary {
  const turns = measurements
    .filter((m) => m.shape === shape.id)
    .map((m) => turnNumbers(m, shape))
    .sort((a, b) => a.run - b.run);
  const counted = turns.filter((t) => t.counted);
  const of = (pick: (t: TurnNumbers) => number | null) =>
    spread(counted.map(pick).filter((value): value is number => value !== null));
  const firstWord = of((t) => t.firstWordMs);
  const completed = of((t) => t.completedMs);
  const firstWordMet = firstWord !== null && firstWord.median <= shape.firstWordTargetMs;
  const completedMet = completed !== null && completed.median <= shape.completedTargetMs;
  const band = bandVerdict(shape, completed);
  const allCounted = turns.length > 0 && counted.length === turns.length;
  let representative: TurnNumbers | null = null;
  for (const turn of counted) {
    const distance = (t: TurnNumbers) => Math.abs((t.completedMs ?? 0) - (completed?.median ?? 0));
    if (!representative || distance(turn) < distance(representative)) representative = turn;
  }
  return {
    shape,
    turns,
    firstWord,
    completed,
    modelCalls: of((t) => t.modelCalls),
    backToBack: of((t) => t.backToBackMs),
    costUsd: of((t) => t.costUsd),
    timeline: {
      modelWall: of((t) => t.modelWallMs),
      betweenCalls: of((t) => t.betweenCallsMs),
      answerCallStart: of((t) => t.answerCallStartMs),
      firstWordAfterAnswerCall: of((t) => t.firstWordAfterAnswerCallMs),
      afterLastWord: of((t) => (t.completedMs === null || t.lastWordMs === null ? null : t.completedMs - t.lastWordMs)),
    },
    verdict: {
      firstWord: firstWordMet,
      completed: completedMet,
      band,
      met: allCounted && firstWordMet && completedMet && (band?.met ?? true),
    },
    representative,
  };
}

/** Every shape measured, in the table's order. */
export function summarisePacing(
  measurements: readonly TurnMeasurement[],
  shapes: readonly PacingShape[] = PACING_SHAPES,
): ShapeSummary[] {
  return shapes
    .filter((shape) => measurements.some((m) => m.shape === shape.id))
    .map((shape) => summariseShape(shape, measurements));
}
