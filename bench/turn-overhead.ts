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

export interface TurnOverheadResult {
  turn: Summary;
  bare: Summary;
  /** p50(turn) / p50(bare). */
  ratio: number;
  /** POST sent → 201 received: the synchronous part of the turn (auth, insert, workflow start). */
  turnPost: Summary;
  /** POST sent → `turn.started` received: includes the first workflow task and the startTurn activity. */
  turnFirstEvent: Summary;
  /** Counted from the recorded histories, so a change to the workflow cannot silently skew the baseline. */
  activitiesPerRun: { turn: number; bare: number };
  eventsPerTurn: number;
}

const FALLBACK_TURN_BODY = { messages: [{ role: 'user', content: 'thanks!' }] };

interface TurnTiming {
  turnId: string;
  totalMs: number;
  postMs: number;
  firstEventMs: number;
  events: number;
}

async function runFallbackTurn(opts: TurnOverheadOptions): Promise<TurnTiming> {
  const started = nowMs();
  const created = await postJson(`${opts.apiUrl}/v1/turns`, FALLBACK_TURN_BODY, opts);
  const postMs = nowMs() - started;
  if (created.status !== 201)
    throw new Error(`POST /v1/turns answered ${created.status}: ${JSON.stringify(created.body)}`);
  const turnId = (created.body as { id: string }).id;

  const seen = { firstEventAt: 0, events: 0, terminal: null as { type: string; at: number } | null };
  const stream = await openSse(`${opts.apiUrl}/v1/turns/${turnId}/events`, {
    ...opts,
    onMessage(message, receivedAt) {
      seen.events++;
      seen.firstEventAt ||= receivedAt;
      if (message.type === 'turn.completed' || message.type === 'turn.failed') {
        seen.terminal ??= { type: message.type, at: receivedAt };
      }
    },
  });
  await stream.ended;
  const { terminal } = seen;
  if (!terminal) throw new Error(`turn ${turnId}: the stream ended without a terminal event`);
  if (terminal.type !== 'turn.completed') throw new Error(`turn ${turnId} ended with ${terminal.type}`);
  // Let the workflow finish (its last task runs after turn.completed is written) outside the timed
  // window, so it does not overlap the next run.
  await opts.temporal.workflow.getHandle(turnId).result();
  return {
    turnId,
    totalMs: terminal.at - started,
    postMs,
    firstEventMs: seen.firstEventAt - started,
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

async function countScheduledActivities(temporal: Client, workflowId: string): Promise<number> {
  const history = await temporal.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).length;
}

export async function measureTurnOverhead(opts: TurnOverheadOptions): Promise<TurnOverheadResult> {
  const turns: TurnTiming[] = [];
  const bare: number[] = [];
  let lastBareId = '';
  // One after the other, never concurrently: the user may have only 3 turns in flight, and overlap
  // would measure queueing instead of overhead. Alternating A, B, A, B spreads machine noise
  // (GC, the other core's load, Temporal's timers) evenly over both series.
  for (let run = 0; run < opts.warmupRuns + opts.measuredRuns; run++) {
    const turn = await runFallbackTurn(opts);
    const baseline = await runBareWorkflow(opts, run);
    lastBareId = baseline.workflowId;
    if (run < opts.warmupRuns) continue;
    turns.push(turn);
    bare.push(baseline.totalMs);
  }
  const turnSummary = summarize(turns.map((t) => t.totalMs));
  const bareSummary = summarize(bare);
  return {
    turn: turnSummary,
    bare: bareSummary,
    ratio: turnSummary.p50 / bareSummary.p50,
    turnPost: summarize(turns.map((t) => t.postMs)),
    turnFirstEvent: summarize(turns.map((t) => t.firstEventMs)),
    activitiesPerRun: {
      turn: await countScheduledActivities(opts.temporal, turns[turns.length - 1].turnId),
      bare: await countScheduledActivities(opts.temporal, lastBareId),
    },
    eventsPerTurn: turns[turns.length - 1].events,
  };
}
