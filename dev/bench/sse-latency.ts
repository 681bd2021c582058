/**
 * (b) Event append → SSE client latency under a steady stream: one writer appends `agent.thought`
 * events to a turn at a fixed rate, as an activity relays model deltas (one awaited append per delta),
 * while one client reads the turn's stream from the API. Writer and reader share this process, so
 * their clocks agree and each event's latency is receive time minus the send time it carries.
 */
import type http from 'node:http';
import type { Pool } from 'pg';
import type { EventLog, NewTurnEvent } from '../../platform/event-log';
import { createBenchUser, insertQueuedTurns } from './fixtures';
import { openSse } from './http-client';
import { nowMs, summarize, type Summary } from './stats';

export interface SseLatencyOptions {
  apiUrl: string;
  pool: Pool;
  events: EventLog;
  agent: http.Agent;
  eventsPerSecond: number;
  seconds: number;
}

export interface SseLatencyResult {
  latency: Summary;
  /** How long each append's transaction took, i.e. the part of the latency spent before NOTIFY fires. */
  append: Summary;
  sent: number;
  received: number;
  /** Events actually sent per second; below the target rate the writer could not keep up. */
  achievedRate: number;
  /** ids 1..n with no hole or repeat, each carrying the sequence number it was sent with. */
  inOrderNoGaps: boolean;
  problems: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function measureSseLatency(opts: SseLatencyOptions): Promise<SseLatencyResult> {
  const { userId, apiKey } = await createBenchUser(opts.pool, 'sse');
  const [turnId] = await insertQueuedTurns(opts.pool, userId, 1);
  const total = Math.round(opts.eventsPerSecond * opts.seconds);
  const received: Array<{ id: number; seq: number; latencyMs: number }> = [];
  let allReceived: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (allReceived = resolve));

  const stream = await openSse(`${opts.apiUrl}/v1/turns/${turnId}/events`, {
    apiKey,
    agent: opts.agent,
    onMessage(message, receivedAt) {
      const data = JSON.parse(message.data) as { seq: number; sent_at: number };
      received.push({ id: message.id, seq: data.seq, latencyMs: receivedAt - data.sent_at });
      if (received.length === total) allReceived();
    },
  });

  // Events are scheduled on a fixed grid (event i at start + i·interval) rather than "interval after the
  // previous one", so a slow append is caught up on instead of lowering the rate.
  const intervalMs = 1000 / opts.eventsPerSecond;
  const appendMs: number[] = [];
  const start = nowMs() + 50;
  let firstSentAt = 0;
  let lastSentAt = 0;
  for (let seq = 0; seq < total; seq++) {
    const wait = start + seq * intervalMs - nowMs();
    if (wait > 0) await sleep(wait);
    const sentAt = nowMs();
    firstSentAt ||= sentAt;
    lastSentAt = sentAt;
    await opts.events.append(turnId, [
      {
        type: 'agent.thought',
        data: { agent: 'synthesis', delta: 'steady as she goes ', attempt: 1, step: 'synthesis', seq, sent_at: sentAt },
      } as unknown as NewTurnEvent, // `seq` and `sent_at` are the bench's probes, outside the schema
    ]);
    appendMs.push(nowMs() - sentAt);
  }
  await Promise.race([done, sleep(5_000)]);
  stream.close();

  const problems: string[] = [];
  if (received.length !== total) problems.push(`received ${received.length} of ${total} events`);
  const outOfPlace = received.findIndex((e, i) => e.id !== i + 1 || e.seq !== i);
  if (outOfPlace !== -1) {
    const e = received[outOfPlace];
    problems.push(`event #${outOfPlace + 1} arrived as id ${e.id} carrying seq ${e.seq}`);
  }
  return {
    latency: summarize(received.map((e) => e.latencyMs)),
    append: summarize(appendMs),
    sent: total,
    received: received.length,
    achievedRate: (total - 1) / ((lastSentAt - firstSentAt) / 1000),
    inOrderNoGaps: problems.length === 0,
    problems,
  };
}
