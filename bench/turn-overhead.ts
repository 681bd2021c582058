/**
 * (a) What the service adds on top of Temporal for the cheapest turn: a fallback turn timed from the
 * client's point of view (POST sent → `turn.completed` received over SSE) against a bare workflow
 * that schedules the same number of no-op activities on the same Temporal server.
 */
import type http from 'node:http';
import type { Client } from '@temporalio/client';
import type { BareWorkflow } from './bare-workflow';
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

/** Where a run's time went, from its recorded history (server timestamps). */
export interface HistoryBreakdown {
  activities: number;
  /** Workflow tasks and activity tasks waiting between scheduled and picked up by the worker. */
  dispatchMs: number;
  /** Activities executing (started → completed): the service's own work. */
  activityMs: number;
}

export interface TurnOverheadResult {
  turn: Summary;
  bare: Summary;
  /** p50(turn) / p50(bare). */
  ratio: number;
  /** POST sent → the turn's workflow closed: the same end point as the bare clock's. */
  turnToClose: Summary;
  /** POST sent → 201 received: the synchronous part of the turn (auth, insert, workflow start). */
  turnPost: Summary;
  turnHistory: { activities: number; dispatch: Summary; activity: Summary };
  bareHistory: { activities: number; dispatch: Summary; activity: Summary };
  eventsPerTurn: number;
}

const FALLBACK_TURN_BODY = { messages: [{ role: 'user', content: 'thanks!' }] };

interface TurnTiming {
  workflowId: string;
  totalMs: number;
  toCloseMs: number;
  postMs: number;
  events: number;
}

async function runFallbackTurn(opts: TurnOverheadOptions): Promise<TurnTiming> {
  const started = nowMs();
  const created = await postJson(`${opts.apiUrl}/v1/turns`, FALLBACK_TURN_BODY, opts);
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
  await opts.temporal.workflow.getHandle(turnId).result();
  return {
    workflowId: turnId,
    totalMs: terminal.at - started,
    toCloseMs: nowMs() - started,
    postMs,
    events: seen.events,
  };
}

async function runBareWorkflow(
  opts: TurnOverheadOptions,
  run: number,
): Promise<{ workflowId: string; totalMs: number }> {
  const workflowId = `bench-bare-${Date.now().toString(36)}-${run}`;
  const started = nowMs();
  const handle = await opts.temporal.workflow.start<typeof BareWorkflow>('BareWorkflow', {
    workflowId,
    taskQueue: opts.bareTaskQueue,
    args: [],
  });
  await handle.result();
  return { workflowId, totalMs: nowMs() - started };
}

type Timestamp = { seconds?: { toString(): string } | null; nanos?: number | null } | null | undefined;
const timestampMs = (ts: Timestamp) => Number(ts?.seconds?.toString() ?? 0) * 1000 + (ts?.nanos ?? 0) / 1e6;

async function historyBreakdown(temporal: Client, workflowId: string): Promise<HistoryBreakdown> {
  const history = await temporal.workflow.getHandle(workflowId).fetchHistory();
  const at = new Map<string, number>();
  const breakdown: HistoryBreakdown = { activities: 0, dispatchMs: 0, activityMs: 0 };
  let workflowTaskScheduledAt = 0;
  const since = (eventId: { toString(): string } | null | undefined, time: number) => time - at.get(String(eventId))!;
  for (const event of history.events ?? []) {
    const time = timestampMs(event.eventTime);
    at.set(String(event.eventId), time);
    if (event.workflowTaskScheduledEventAttributes) workflowTaskScheduledAt = time;
    if (event.workflowTaskStartedEventAttributes) breakdown.dispatchMs += time - workflowTaskScheduledAt;
    if (event.activityTaskScheduledEventAttributes) breakdown.activities++;
    const started = event.activityTaskStartedEventAttributes;
    if (started) breakdown.dispatchMs += since(started.scheduledEventId, time);
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) breakdown.activityMs += since(completed.startedEventId, time);
  }
  return breakdown;
}

async function summarizeHistories(temporal: Client, workflowIds: string[]) {
  const breakdowns: HistoryBreakdown[] = [];
  for (const id of workflowIds) breakdowns.push(await historyBreakdown(temporal, id));
  const counts = new Set(breakdowns.map((b) => b.activities));
  if (counts.size !== 1) throw new Error(`runs scheduled different numbers of activities: ${[...counts].join(', ')}`);
  return {
    activities: breakdowns[0].activities,
    dispatch: summarize(breakdowns.map((b) => b.dispatchMs)),
    activity: summarize(breakdowns.map((b) => b.activityMs)),
  };
}

export async function measureTurnOverhead(opts: TurnOverheadOptions): Promise<TurnOverheadResult> {
  const turns: TurnTiming[] = [];
  const bare: Array<{ workflowId: string; totalMs: number }> = [];
  // One after the other, never concurrently: the user may have only 3 turns in flight, and overlap
  // would measure queueing instead of overhead. Alternating A, B, A, B spreads machine noise
  // (GC, the other core's load, Temporal's timers) evenly over both series.
  for (let run = 0; run < opts.warmupRuns + opts.measuredRuns; run++) {
    const turn = await runFallbackTurn(opts);
    const baseline = await runBareWorkflow(opts, run);
    if (run < opts.warmupRuns) continue;
    turns.push(turn);
    bare.push(baseline);
  }
  const turnSummary = summarize(turns.map((t) => t.totalMs));
  const bareSummary = summarize(bare.map((b) => b.totalMs));
  return {
    turn: turnSummary,
    bare: bareSummary,
    ratio: turnSummary.p50 / bareSummary.p50,
    turnToClose: summarize(turns.map((t) => t.toCloseMs)),
    turnPost: summarize(turns.map((t) => t.postMs)),
    turnHistory: await summarizeHistories(
      opts.temporal,
      turns.map((t) => t.workflowId),
    ),
    bareHistory: await summarizeHistories(
      opts.temporal,
      bare.map((b) => b.workflowId),
    ),
    eventsPerTurn: turns[turns.length - 1].events,
  };
}
