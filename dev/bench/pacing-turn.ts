/**
 * One turn of `npm run bench:pacing` as a client sees it: `POST /v1/turns`, then the turn's event stream
 * until its terminal event, over the public HTTP API (dev/bench/http-client.ts). Records when the first
 * and the last delta of the answer arrived and when the turn ended, counted from just before the POST;
 * nothing of the answer's text is kept.
 */
import type http from 'node:http';
import { openSse, postJson } from './http-client';
import { isAnswerDelta } from './pacing-targets';
import { nowMs } from './stats';

export interface ClientObservation {
  turnId: string | null;
  outcome: 'completed' | 'failed' | 'lost';
  /** Why a turn was lost or failed (a status, a timeout, the error code); never the answer. */
  reason: string | null;
  /** The POST's send time on the system clock (epoch ms), to place the ledger's calls against it. */
  postAtEpochMs: number;
  /** From the POST to the first / last answer delta received, and to the terminal event; null when none came. */
  firstWordMs: number | null;
  lastWordMs: number | null;
  endedMs: number | null;
  /** The step of the first answer delta (`synthesis`, `fallback_reply`, `investigator_briefing`). */
  answerStep: string | null;
  /** `result.agents_used` of a completed turn. */
  agentsUsed: string[] | null;
  /** `step.retry` events: a retried step makes the turn's times a measure of the retry, not of the pacing. */
  stepRetries: number;
}

interface ThoughtData {
  agent: string;
  step?: string;
}

/** Starts a turn asking `question` and follows it to its end, or for `timeoutMs` at most. */
export async function followTurn(opts: {
  apiUrl: string;
  apiKey: string;
  agent: http.Agent;
  question: string;
  timeoutMs: number;
}): Promise<ClientObservation> {
  const postAt = nowMs();
  const observation: ClientObservation = {
    turnId: null,
    outcome: 'lost',
    reason: null,
    postAtEpochMs: Date.now(),
    firstWordMs: null,
    lastWordMs: null,
    endedMs: null,
    answerStep: null,
    agentsUsed: null,
    stepRetries: 0,
  };
  const body = { messages: [{ role: 'user', content: opts.question }] };
  const created = await postJson(`${opts.apiUrl}/v1/turns`, body, { apiKey: opts.apiKey, agent: opts.agent });
  if (created.status !== 201) {
    observation.reason = `POST answered ${created.status}`;
    return observation;
  }
  const turnId = (created.body as { id: string }).id;
  observation.turnId = turnId;

  const deadline = postAt + opts.timeoutMs;
  let lastId = 0;
  let ended = false;
  // As an EventSource would: after a dropped connection, resume after the last id received.
  while (!ended && nowMs() < deadline) {
    const resume = lastId > 0 ? `?last_event_id=${lastId}` : '';
    const stream = await openSse(`${opts.apiUrl}/v1/turns/${turnId}/events${resume}`, {
      apiKey: opts.apiKey,
      agent: opts.agent,
      onMessage(message, receivedAt) {
        lastId = Math.max(lastId, message.id);
        const sincePost = receivedAt - postAt;
        if (message.type === 'agent.thought') {
          const thought = JSON.parse(message.data) as ThoughtData;
          if (!isAnswerDelta(thought)) return;
          observation.firstWordMs ??= sincePost;
          observation.answerStep ??= thought.step ?? null;
          observation.lastWordMs = sincePost;
        } else if (message.type === 'step.retry') {
          observation.stepRetries++;
        } else if (message.type === 'turn.completed' || message.type === 'turn.failed') {
          ended = true;
          observation.endedMs = sincePost;
          const data = JSON.parse(message.data) as {
            result?: { agents_used?: string[] };
            error?: { code?: string };
          };
          if (message.type === 'turn.completed') {
            observation.outcome = 'completed';
            observation.agentsUsed = data.result?.agents_used ?? [];
          } else {
            observation.outcome = 'failed';
            observation.reason = `turn.failed: ${data.error?.code ?? 'unknown'}`;
          }
        }
      },
    }).catch(() => null);
    if (!stream) {
      // The API refused or dropped the connection before answering: try again shortly, as a client would.
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    const timer = setTimeout(() => stream.close(), Math.max(0, deadline - nowMs()));
    await stream.ended;
    clearTimeout(timer);
  }
  if (!ended) observation.reason = `no terminal event within ${opts.timeoutMs / 1000} s`;
  return observation;
}
