/**
 * The client side of `npm run load`: turns started with `POST /v1/turns` by many users, each followed by
 * M SSE subscribers that connect right after the 201, as browser tabs would. Only the public HTTP API
 * is used. Every event's arrival is recorded per subscriber, to be compared with its commit afterwards.
 *
 * The subscribers use bench/http-client.ts: a plain SSE parser (id / event / data / comments, events
 * split anywhere by TCP) over node:http. It does what an EventSource does for these streams (Accept:
 * text/event-stream, resume with the last id after a drop) without the per-stream cost of a
 * browser-grade client, which matters when the load generator shares 2 cores with the service.
 */
import type http from 'node:http';
import { openSse, postJson, type SseMessage } from './http-client';
import { nowMs } from './stats';

export type TurnKind = 'fallback' | 'knowledge' | 'data';

/** One question per kind, each routed by the scripted model to the path named (checked per turn). */
export const QUESTIONS: Record<TurnKind, { question: string; agentsUsed: string }> = {
  // Small talk: classify, route, one streamed reply, memory.
  fallback: { question: 'thanks!', agentsUsed: '' },
  // Pattern 1: the Domain Expert's tool loop (reference ranges, literature priors), synthesis, fact-check.
  knowledge: { question: 'What is heart rate variability?', agentsUsed: 'domain_expert' },
  // Pattern 2: Data Science with a real sandbox run (~1 s of Python), the gates, Critic, Assessment.
  data: { question: 'What is my average resting heart rate over the last 90 days?', agentsUsed: 'data_science' },
};

export interface LoadUser {
  apiKey: string;
  inFlight: number;
}

interface SubscriberRecord {
  /** When the first GET was sent and when its 200 headers arrived (the subscription is registered by then). */
  sentAt: number;
  readyAt: number | null;
  /** Event ids in arrival order and their arrival times (this process's clock, ms). */
  ids: number[];
  arrivals: number[];
  terminal: { type: string; at: number } | null;
  /** Streams that ended without a terminal event and were resumed with the last id received. */
  reconnects: number;
  /** Events that did not come as last id + 1 (a gap, a repeat or a reordering). */
  outOfOrder: number;
  error: string | null;
}

type TurnOutcome = 'completed' | 'failed' | 'lost';

export interface TurnRecord {
  index: number;
  kind: TurnKind;
  turnId: string | null;
  /** The turn's clock starts here: the scheduled arrival in open loop, the POST being sent in closed loop. */
  startAt: number;
  postSentAt: number;
  postMs: number;
  /** 429 answers (the per-user cap) before the 201; the driver keeps users under the cap, so expect 0. */
  rejected429: number;
  outcome: TurnOutcome;
  lostReason: string | null;
  /** The terminal event at the first and at the last of the subscribers that received it. */
  terminalFirstAt: number | null;
  terminalLastAt: number | null;
  /** Subscribers that never received the terminal event. */
  subscribersWithoutTerminal: number;
  /** From the terminal event: the agents the turn used, to check it took the path of its kind. */
  agentsUsed: string | null;
  subscribers: SubscriberRecord[];
}

export interface DriverOptions {
  /**
   * The API processes. Turn i is created on process i mod M and its subscriber j connects to process
   * (i + j) mod M, so with M > 1 most streams watch a turn created elsewhere (each process's LISTEN
   * fan-out serves turns of every process).
   */
  apiUrls: string[];
  agent: http.Agent;
  users: LoadUser[];
  subscribers: number;
  /** The API's per-user cap on queued + running turns. */
  perUserCap: number;
  turnTimeoutMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isTerminal = (type: string) => type === 'turn.completed' || type === 'turn.failed';

async function subscribe(
  opts: DriverOptions,
  apiUrl: string,
  apiKey: string,
  turnId: string,
  deadline: number,
  onTerminal: (message: SseMessage) => void,
): Promise<SubscriberRecord> {
  const rec: SubscriberRecord = {
    sentAt: nowMs(),
    readyAt: null,
    ids: [],
    arrivals: [],
    terminal: null,
    reconnects: 0,
    outOfOrder: 0,
    error: null,
  };
  let lastId = 0;
  while (!rec.terminal && nowMs() < deadline) {
    // What an EventSource does after a drop: reconnect and resume after the last id it saw.
    const resume = lastId > 0 ? `?last_event_id=${lastId}` : '';
    let stream;
    try {
      stream = await openSse(`${apiUrl}/v1/turns/${turnId}/events${resume}`, {
        apiKey,
        agent: opts.agent,
        onMessage(message, receivedAt) {
          if (message.id !== lastId + 1) rec.outOfOrder++;
          lastId = Math.max(lastId, message.id);
          rec.ids.push(message.id);
          rec.arrivals.push(receivedAt);
          if (isTerminal(message.type) && !rec.terminal) {
            rec.terminal = { type: message.type, at: receivedAt };
            onTerminal(message);
          }
        },
      });
    } catch (err) {
      rec.error = err instanceof Error ? err.message : String(err);
      rec.reconnects++;
      await sleep(100);
      continue;
    }
    rec.readyAt ??= nowMs();
    const timer = setTimeout(() => stream.close(), Math.max(0, deadline - nowMs()));
    await stream.ended;
    clearTimeout(timer);
    if (!rec.terminal && nowMs() < deadline) rec.reconnects++;
  }
  return rec;
}

/** Starts one turn for `user` and follows it to its end (or the timeout) with M subscribers. */
async function runTurn(
  opts: DriverOptions,
  user: LoadUser,
  spec: { index: number; kind: TurnKind; startAt: number },
): Promise<TurnRecord> {
  const record: TurnRecord = {
    ...spec,
    turnId: null,
    postSentAt: nowMs(),
    postMs: 0,
    rejected429: 0,
    outcome: 'lost',
    lostReason: null,
    terminalFirstAt: null,
    terminalLastAt: null,
    subscribersWithoutTerminal: opts.subscribers,
    agentsUsed: null,
    subscribers: [],
  };
  const deadline = spec.startAt + opts.turnTimeoutMs;
  const apiUrl = (k: number) => opts.apiUrls[(spec.index + k) % opts.apiUrls.length];
  const body = { messages: [{ role: 'user', content: QUESTIONS[spec.kind].question }] };
  try {
    for (;;) {
      record.postSentAt = nowMs();
      const created = await postJson(`${apiUrl(0)}/v1/turns`, body, { apiKey: user.apiKey, agent: opts.agent });
      record.postMs = nowMs() - record.postSentAt;
      if (created.status === 201) {
        record.turnId = (created.body as { id: string }).id;
        break;
      }
      if (created.status === 429 && nowMs() < deadline) {
        record.rejected429++;
        await sleep(50);
        continue;
      }
      record.lostReason = `POST answered ${created.status}: ${JSON.stringify(created.body).slice(0, 200)}`;
      return record;
    }
  } catch (err) {
    record.lostReason = `POST failed: ${err instanceof Error ? err.message : String(err)}`;
    return record;
  }

  const turnId = record.turnId;
  let terminalData: string | null = null;
  record.subscribers = await Promise.all(
    Array.from({ length: opts.subscribers }, (_, j) =>
      subscribe(opts, apiUrl(j), user.apiKey, turnId, deadline, (message) => {
        terminalData ??= message.data;
        if (record.outcome === 'lost') record.outcome = message.type === 'turn.completed' ? 'completed' : 'failed';
      }),
    ),
  );
  const terminals = record.subscribers.flatMap((s) => (s.terminal ? [s.terminal.at] : []));
  record.subscribersWithoutTerminal = opts.subscribers - terminals.length;
  if (terminals.length > 0) {
    record.terminalFirstAt = Math.min(...terminals);
    record.terminalLastAt = Math.max(...terminals);
  } else {
    record.lostReason = `no terminal event within ${opts.turnTimeoutMs / 1000} s`;
  }
  if (terminalData !== null && record.outcome === 'completed') {
    const data = JSON.parse(terminalData) as { result?: { agents_used?: string[] } };
    record.agentsUsed = (data.result?.agents_used ?? []).join(',');
  }
  return record;
}

/** Takes a user with room under the per-user cap (round robin), waiting for one if every user is full. */
async function acquireUser(opts: DriverOptions, state: { next: number }): Promise<LoadUser> {
  for (;;) {
    for (let i = 0; i < opts.users.length; i++) {
      const user = opts.users[(state.next + i) % opts.users.length];
      if (user.inFlight < opts.perUserCap) {
        state.next = (state.next + i + 1) % opts.users.length;
        user.inFlight++;
        return user;
      }
    }
    await sleep(5);
  }
}

export interface PhaseOptions {
  turns: number;
  concurrency: number;
  /** Turns started per second (open loop); undefined: closed loop, each slot starts its next turn at once. */
  rate?: number;
  kindOf(index: number): TurnKind;
  onProgress?(done: number): void;
  /** Turns whose POST has been sent and that have not ended yet (for the in-flight phase's samples). */
  inFlight?: { turns: number };
}

export interface PhaseResult {
  records: TurnRecord[];
  startedAt: number;
  endedAt: number;
  /** Open loop: how late turns started against their schedule because `concurrency` were in flight. */
  startDelays: number[];
}

/**
 * Runs `turns` turns with at most `concurrency` in flight. Closed loop: `concurrency` slots each start a
 * turn as soon as their previous one ends. Open loop (`rate`): turn i is due at start + i / rate and its
 * clock starts then, even if it has to wait for a free slot, so a backlog shows in the latencies instead of
 * quietly lowering the offered load.
 */
export async function runPhase(opts: DriverOptions, phase: PhaseOptions): Promise<PhaseResult> {
  const records: TurnRecord[] = [];
  const startDelays: number[] = [];
  const userState = { next: 0 };
  const startedAt = nowMs();
  let nextIndex = 0;
  let inFlight = 0;
  let done = 0;
  const one = async (index: number, startAt: number) => {
    const user = await acquireUser(opts, userState);
    if (phase.inFlight) phase.inFlight.turns++;
    try {
      records.push(await runTurn(opts, user, { index, kind: phase.kindOf(index), startAt }));
    } finally {
      if (phase.inFlight) phase.inFlight.turns--;
      user.inFlight--;
      phase.onProgress?.(++done);
    }
  };
  if (phase.rate === undefined) {
    const slot = async () => {
      while (nextIndex < phase.turns) await one(nextIndex++, nowMs());
    };
    await Promise.all(Array.from({ length: Math.min(phase.concurrency, phase.turns) }, slot));
  } else {
    const running: Array<Promise<void>> = [];
    let freed: () => void = () => undefined;
    for (let index = 0; index < phase.turns; index++) {
      const due = startedAt + (index * 1000) / phase.rate;
      const wait = due - nowMs();
      if (wait > 0) await sleep(wait);
      while (inFlight >= phase.concurrency) await new Promise<void>((resolve) => (freed = resolve));
      startDelays.push(Math.max(0, nowMs() - due));
      inFlight++;
      running.push(
        one(index, due).finally(() => {
          inFlight--;
          freed();
        }),
      );
    }
    await Promise.all(running);
  }
  records.sort((a, b) => a.index - b.index);
  return { records, startedAt, endedAt: nowMs(), startDelays };
}
