/**
 * (a) What the service adds on top of Temporal for the cheapest turn: a fallback turn timed from the
 * client's point of view (POST sent → `turn.completed` received over SSE) against a bare workflow
 * that schedules the same number of no-op activities on the same Temporal server, one per step of the
 * turn (and, informational, against one of the turn's own shape, its local activities local). The same comparison
 * serves (f), a full data turn, with another question (dev/bench/data-turn-overhead.ts).
 */
import type http from 'node:http';
import type { Client } from '@temporalio/client';
import type { TurnResult } from '../../contracts/turn';
import type { TurnWorkflow } from '../../workflows/turn-workflow';
import type { BareWorkflow } from './bare-workflow';
import { activityShape, asActivities, shapeKey, type BareStep } from './history-shape';
import { openSse, postJson } from './http-client';
import { nowMs, summarize, type Summary } from './stats';

export interface TurnOverheadOptions {
  apiUrl: string;
  apiKey: string;
  agent: http.Agent;
  temporal: Client;
  bareTaskQueue: string;
  warmupRuns: number;
  measuredRuns: number;
}

export interface TurnAgainstBareOptions extends TurnOverheadOptions {
  /** The user message of every turn. */
  question: string;
  /** Throws when a turn did not take the path being measured; checked on every run, warm-up included. */
  checkResult?: (result: TurnResult) => void;
}

/** Where a run's time went, from its recorded history (server timestamps). */
export interface HistoryBreakdown {
  /** The activity types, in the order they were scheduled. */
  activityTypes: string[];
  /** Activities and local activities as the bare workflow runs them: order, and what waits for what. */
  steps: BareStep[];
  localActivities: number;
  /** The most activities scheduled and not yet closed at one time: 1 means one after another. */
  maxConcurrentActivities: number;
  /** Workflow tasks and activity tasks waiting between scheduled and picked up by the worker. */
  dispatchMs: number;
  /** Workflow tasks running on the worker (started → completed): the workflow code deciding what comes next. */
  workflowTaskMs: number;
  /** Activities executing (started → completed): the service's own work. */
  activityMs: number;
  /** activityMs by activity type. */
  activityMsByType: Map<string, number>;
}

interface HistorySummary {
  activities: number;
  localActivities: number;
  /** The same in every run (checked). */
  activityTypes: string[];
  /** Activities and local activities in order (history-shape.ts's shapeKey), the same in every run. */
  shape: string;
  maxConcurrentActivities: number;
  dispatch: Summary;
  workflowTask: Summary;
  activity: Summary;
  /** Each activity type's execution time per run, in the order first scheduled. */
  byType: Array<{ type: string; ms: Summary }>;
}

/** A bare workflow's runs, and the turn's median against theirs. */
interface BareSeries {
  runs: Summary;
  /** p50(turn) / p50(bare). */
  ratio: number;
  history: HistorySummary;
}

export interface TurnOverheadResult {
  turn: Summary;
  /** The floor: one no-op activity per step of the turn. */
  bare: Summary;
  /** p50(turn) / p50(bare). */
  ratio: number;
  /** The floor of the turn's own shape (its local activities local), when it has local activities. */
  mirror: BareSeries | null;
  /** POST sent → the turn's workflow closed: the same end point as the bare clock's. */
  turnToClose: Summary;
  /** POST sent → 201 received: the synchronous part of the turn (auth, insert, workflow start). */
  turnPost: Summary;
  turnHistory: HistorySummary;
  bareHistory: HistorySummary;
  eventsPerTurn: number;
  /** What the last measured turn's workflow returned. */
  lastResult: TurnResult;
}

const FALLBACK_QUESTION = 'thanks!';

interface TurnTiming {
  workflowId: string;
  totalMs: number;
  toCloseMs: number;
  postMs: number;
  events: number;
  result: TurnResult;
}

/** One turn through the API: POST, its SSE stream until the terminal event, then its workflow's close. */
export async function runTurn(
  opts: Pick<TurnAgainstBareOptions, 'apiUrl' | 'apiKey' | 'agent' | 'temporal' | 'question' | 'checkResult'>,
): Promise<TurnTiming> {
  const body = { messages: [{ role: 'user', content: opts.question }] };
  const started = nowMs();
  const created = await postJson(`${opts.apiUrl}/v1/turns`, body, opts);
  const postMs = nowMs() - started;
  if (created.status !== 201) {
    throw new Error(`POST /v1/turns answered ${created.status}: ${JSON.stringify(created.body)}`);
  }
  const turnId = (created.body as { id: string }).id;

  const seen = { events: 0, terminal: null as { type: string; at: number } | null };
  const stream = await openSse(`${opts.apiUrl}/v1/turns/${turnId}/events`, {
    ...opts,
    onMessage(message, receivedAt) {
      seen.events++;
      if (message.type === 'turn.completed' || message.type === 'turn.failed') {
        seen.terminal ??= { type: message.type, at: receivedAt };
      }
    },
  });
  await stream.ended;
  const { terminal } = seen;
  if (!terminal) throw new Error(`turn ${turnId}: the stream ended without a terminal event`);
  if (terminal.type !== 'turn.completed') throw new Error(`turn ${turnId} ended with ${terminal.type}`);
  // The workflow's last task runs after turn.completed is written; waiting for it keeps it from
  // overlapping the next run, and gives the turn a clock with the same end point as the bare one.
  const result = await opts.temporal.workflow.getHandle<typeof TurnWorkflow>(turnId).result();
  const toCloseMs = nowMs() - started;
  opts.checkResult?.(result);
  return { workflowId: turnId, totalMs: terminal.at - started, toCloseMs, postMs, events: seen.events, result };
}

let bareRuns = 0;

/** One bare workflow with `steps`, started and awaited with the Temporal client. */
export async function runBareWorkflow(
  opts: Pick<TurnOverheadOptions, 'temporal' | 'bareTaskQueue'>,
  steps: BareStep[],
): Promise<{ workflowId: string; totalMs: number }> {
  const workflowId = `bench-bare-${Date.now().toString(36)}-${++bareRuns}`;
  const started = nowMs();
  const handle = await opts.temporal.workflow.start<typeof BareWorkflow>('BareWorkflow', {
    workflowId,
    taskQueue: opts.bareTaskQueue,
    args: [steps],
  });
  await handle.result();
  return { workflowId, totalMs: nowMs() - started };
}

type Timestamp = { seconds?: { toString(): string } | null; nanos?: number | null } | null | undefined;
const timestampMs = (ts: Timestamp) => Number(ts?.seconds?.toString() ?? 0) * 1000 + (ts?.nanos ?? 0) / 1e6;

export async function historyBreakdown(temporal: Client, workflowId: string): Promise<HistoryBreakdown> {
  const history = await temporal.workflow.getHandle(workflowId).fetchHistory();
  const shape = activityShape(history.events ?? []);
  const at = new Map<string, number>();
  const typeOf = new Map<string, string>();
  const breakdown: HistoryBreakdown = {
    activityTypes: [],
    steps: shape.steps,
    localActivities: shape.localActivities,
    maxConcurrentActivities: shape.maxConcurrentActivities,
    dispatchMs: 0,
    workflowTaskMs: 0,
    activityMs: 0,
    activityMsByType: new Map(),
  };
  let workflowTaskScheduledAt = 0;
  let workflowTaskStartedAt = 0;
  const since = (eventId: { toString(): string } | null | undefined, time: number) => time - at.get(String(eventId))!;
  for (const event of history.events ?? []) {
    const time = timestampMs(event.eventTime);
    const id = String(event.eventId);
    at.set(id, time);
    if (event.workflowTaskScheduledEventAttributes) workflowTaskScheduledAt = time;
    if (event.workflowTaskStartedEventAttributes) {
      breakdown.dispatchMs += time - workflowTaskScheduledAt;
      workflowTaskStartedAt = time;
    }
    if (event.workflowTaskCompletedEventAttributes) breakdown.workflowTaskMs += time - workflowTaskStartedAt;
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const type = scheduled.activityType?.name ?? 'unknown';
      breakdown.activityTypes.push(type);
      typeOf.set(id, type);
    }
    const started = event.activityTaskStartedEventAttributes;
    if (started) breakdown.dispatchMs += since(started.scheduledEventId, time);
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const ms = since(completed.startedEventId, time);
      const type = typeOf.get(String(completed.scheduledEventId)) ?? 'unknown';
      breakdown.activityMs += ms;
      breakdown.activityMsByType.set(type, (breakdown.activityMsByType.get(type) ?? 0) + ms);
    }
  }
  return breakdown;
}

async function summarizeHistories(temporal: Client, workflowIds: string[]): Promise<HistorySummary> {
  const breakdowns: HistoryBreakdown[] = [];
  for (const id of workflowIds) breakdowns.push(await historyBreakdown(temporal, id));
  const shapes = new Set(breakdowns.map((b) => shapeKey(b.steps)));
  if (shapes.size !== 1) throw new Error(`runs scheduled different activities: ${[...shapes].join(' | ')}`);
  const { activityTypes, localActivities } = breakdowns[0];
  const types = [...new Set(activityTypes)];
  return {
    activities: activityTypes.length,
    localActivities,
    shape: [...shapes][0],
    activityTypes,
    maxConcurrentActivities: Math.max(...breakdowns.map((b) => b.maxConcurrentActivities)),
    dispatch: summarize(breakdowns.map((b) => b.dispatchMs)),
    workflowTask: summarize(breakdowns.map((b) => b.workflowTaskMs)),
    activity: summarize(breakdowns.map((b) => b.activityMs)),
    byType: types.map((type) => ({
      type,
      ms: summarize(breakdowns.map((b) => b.activityMsByType.get(type) ?? 0)),
    })),
  };
}

/**
 * Runs turns asking `question` and bare workflows in turn and compares them. The floor runs one no-op
 * activity per step the first turn's history records (its local activities as full activities too:
 * history-shape.ts's asActivities); when the turn has local activities, a second floor of the turn's own
 * shape runs beside it, informational. Every measured turn must record the same steps, none overlapping.
 */
export async function measureTurnAgainstBare(opts: TurnAgainstBareOptions): Promise<TurnOverheadResult> {
  const turns: TurnTiming[] = [];
  const floorRuns: BareRun[] = [];
  const mirrorRuns: BareRun[] = [];
  let floorSteps: BareStep[] | undefined;
  let mirrorSteps: BareStep[] | null = null;
  // One at a time, never concurrently: the user may have only 3 turns in flight, and overlap would
  // measure queueing instead of overhead. Taking turns, and which goes first rotating, spreads machine
  // noise (GC, the other core's load, Temporal's timers) evenly over the series.
  for (let run = 0; run < opts.warmupRuns + opts.measuredRuns; run++) {
    const measured = run >= opts.warmupRuns;
    const series: Array<() => Promise<unknown>> = [
      async () => {
        const turn = await runTurn(opts);
        if (!floorSteps) {
          const shape = await historyBreakdown(opts.temporal, turn.workflowId);
          // The bare workflow awaits its activities one by one; a turn that overlaps some has another shape.
          if (shape.maxConcurrentActivities > 1) {
            throw new Error(`turn ${turn.workflowId} ran up to ${shape.maxConcurrentActivities} activities at once`);
          }
          floorSteps = asActivities(shape.steps);
          mirrorSteps = shape.localActivities > 0 ? shape.steps : null;
        }
        if (measured) turns.push(turn);
      },
      async () => {
        const bare = await runBareWorkflow(opts, floorSteps!);
        if (measured) floorRuns.push(bare);
      },
      async () => {
        if (!mirrorSteps) return;
        const bare = await runBareWorkflow(opts, mirrorSteps);
        if (measured) mirrorRuns.push(bare);
      },
    ];
    // The first run's turn goes first: it gives the floors their steps.
    for (let i = 0; i < series.length; i++) await series[(run + i) % series.length]();
  }
  const turnSummary = summarize(turns.map((t) => t.totalMs));
  const turnHistory = await summarizeHistories(
    opts.temporal,
    turns.map((t) => t.workflowId),
  );
  if (turnHistory.maxConcurrentActivities > 1) {
    throw new Error(`a measured turn ran up to ${turnHistory.maxConcurrentActivities} activities at once`);
  }
  const floor = await bareSeries(opts.temporal, floorRuns, turnSummary);
  return {
    turn: turnSummary,
    bare: floor.runs,
    ratio: floor.ratio,
    bareHistory: floor.history,
    mirror: mirrorRuns.length > 0 ? await bareSeries(opts.temporal, mirrorRuns, turnSummary) : null,
    turnToClose: summarize(turns.map((t) => t.toCloseMs)),
    turnPost: summarize(turns.map((t) => t.postMs)),
    turnHistory,
    eventsPerTurn: turns[turns.length - 1].events,
    lastResult: turns[turns.length - 1].result,
  };
}

type BareRun = Awaited<ReturnType<typeof runBareWorkflow>>;

async function bareSeries(temporal: Client, runs: BareRun[], turn: Summary): Promise<BareSeries> {
  const summary = summarize(runs.map((b) => b.totalMs));
  return {
    runs: summary,
    ratio: turn.p50 / summary.p50,
    history: await summarizeHistories(
      temporal,
      runs.map((b) => b.workflowId),
    ),
  };
}

export function measureTurnOverhead(opts: TurnOverheadOptions): Promise<TurnOverheadResult> {
  return measureTurnAgainstBare({
    ...opts,
    question: FALLBACK_QUESTION,
    checkResult(result) {
      if (result.agents_used.length > 0) throw new Error(`"thanks!" ran ${result.agents_used.join(', ')}`);
    },
  });
}
