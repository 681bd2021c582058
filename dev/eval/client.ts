/**
 * How the eval talks to the service: over its public HTTP API, as any client would. A turn is created
 * with `POST /v1/turns` and followed with `GET /v1/turns/:id` until it has ended; its events are then
 * read from the Postgres event log (the same rows the SSE stream replays), for the gate verdicts and the
 * agents' narration the Turn resource does not carry.
 */
import type { Pool } from 'pg';
import type { TurnEvent } from '../../contracts/event-data';
import { turnSchema, type Turn } from '../../contracts/turn';
import { createEventLog } from '../../platform/event-log';

export interface EvalUserKey {
  apiKey: string;
}

export interface AskedTurn {
  turn: Turn;
  events: TurnEvent[];
  /** POST sent → the turn seen ended. */
  wallMs: number;
}

const POLL_MS = 250;
/** A data turn takes seconds on the scripted model; a turn still running after this is reported as failed. */
const TURN_DEADLINE_MS = 180_000;

async function request(url: string, apiKey: string, init: { method: string; body?: unknown }): Promise<unknown> {
  const res = await fetch(url, {
    method: init.method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method} ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

export async function askTurn(apiUrl: string, pool: Pool, user: EvalUserKey, question: string): Promise<AskedTurn> {
  const started = performance.now();
  const created = turnSchema.parse(
    await request(`${apiUrl}/v1/turns`, user.apiKey, {
      method: 'POST',
      body: { messages: [{ role: 'user', content: question }] },
    }),
  );
  let turn = created;
  while (turn.status === 'queued' || turn.status === 'running') {
    if (performance.now() - started > TURN_DEADLINE_MS) {
      throw new Error(`turn ${turn.id} still ${turn.status} after ${TURN_DEADLINE_MS / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    turn = turnSchema.parse(await request(`${apiUrl}/v1/turns/${created.id}`, user.apiKey, { method: 'GET' }));
  }
  const wallMs = performance.now() - started;
  const events = await createEventLog(pool).readAfter(turn.id, 0, 100_000);
  return { turn, events, wallMs };
}

/** `POST /v1/memory`: what a client may write about its user. */
export async function rememberForUser(
  apiUrl: string,
  user: EvalUserKey,
  entry: { text: string; category: 'goal' | 'insight' | 'preference' | 'history' },
): Promise<void> {
  await request(`${apiUrl}/v1/memory`, user.apiKey, { method: 'POST', body: entry });
}
