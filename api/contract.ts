/**
 * Every route's contract in one table: the zod schemas the routes validate with, and the source of
 * `/openapi.json`. Tests check responses against the same schemas, so the API cannot drift.
 */
import { z } from 'zod';
import { errorEnvelopeSchema } from '../contracts/errors';
import { createTurnRequestSchema, listTurnsQuerySchema, turnListSchema, turnSchema } from '../contracts/turn';
import { turnEventSchema } from '../contracts/events';
import { createMemoryRequestSchema, listMemoryQuerySchema, memoryListSchema, memorySchema } from '../contracts/memory';

export const turnIdParamsSchema = z.object({ id: z.string() }).strict();
export const memoryIdParamsSchema = z.object({ id: z.string() }).strict();

export const healthSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  postgres: z.object({ ok: z.boolean(), latency_ms: z.number().nullable(), error: z.string().optional() }),
  temporal: z.object({ ok: z.boolean(), latency_ms: z.number().nullable(), error: z.string().optional() }),
});

export const turnEventsSnapshotSchema = turnSchema;

interface ResponseContract {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
}

export interface RouteContract {
  method: 'get' | 'post' | 'delete';
  path: string;
  operationId: string;
  summary: string;
  authenticated: boolean;
  /** Also takes the key as `?api_key=` (for browsers' EventSource); every other route refuses it. */
  apiKeyInQuery?: boolean;
  params?: z.ZodType;
  /** A z.object of the query parameters; each property becomes one `in: query` parameter. */
  query?: z.ZodType;
  body?: z.ZodType;
  headers?: Record<string, string>;
  responses: Record<number, ResponseContract>;
}

const errors = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, { description: 'Error envelope', schema: errorEnvelopeSchema }]));

export const ROUTES = {
  createTurn: {
    method: 'post',
    path: '/v1/turns',
    operationId: 'createTurn',
    summary:
      'Start a turn. Returns the queued Turn at once, or with "stream": false blocks until the turn ends and returns it whole. With an Idempotency-Key, a retry of the same request within 24 h starts nothing: it is answered like the original, with the same turn as it stands now, and the header Idempotent-Replayed: true.',
    authenticated: true,
    body: createTurnRequestSchema,
    headers: {
      'Idempotency-Key':
        'Makes the request safe to retry: 1-255 visible ASCII characters, unique per request (a UUID). Within 24 h, the same key with the same body gives the same turn; with another body, 422 idempotency_key_reused.',
    },
    responses: {
      200: { description: 'The finished turn ("stream": false)', schema: turnSchema },
      201: { description: 'The queued turn', schema: turnSchema },
      ...errors(400, 401, 413, 415, 422, 429, 503),
    },
  },
  listTurns: {
    method: 'get',
    path: '/v1/turns',
    operationId: 'listTurns',
    summary:
      'List your turns, newest first (created_at, then id), a page at a time, optionally only those with one status. Each is the Turn as stored, without progress (GET /v1/turns/{id} has it).',
    authenticated: true,
    query: listTurnsQuerySchema,
    responses: { 200: { description: 'A page of turns', schema: turnListSchema }, ...errors(400, 401) },
  },
  getTurn: {
    method: 'get',
    path: '/v1/turns/{id}',
    operationId: 'getTurn',
    summary:
      'Read a turn. Works forever after the turn ends. While it is queued or running, `progress` shows its current and completed steps, the agents started and the cost so far (left out if the workflow does not answer within a second).',
    authenticated: true,
    params: turnIdParamsSchema,
    responses: { 200: { description: 'The turn', schema: turnSchema }, ...errors(401, 404) },
  },
  cancelTurn: {
    method: 'post',
    path: '/v1/turns/{id}/cancel',
    operationId: 'cancelTurn',
    summary:
      'Cancel a turn. While it is queued or running: 202 with the turn as it stands; it then ends failed with error code "cancelled". Once it has ended: 200 with the turn unchanged. Safe to repeat.',
    authenticated: true,
    params: turnIdParamsSchema,
    responses: {
      200: { description: 'The turn had already ended; it is returned unchanged', schema: turnSchema },
      202: { description: 'Cancellation requested; the turn as it stands', schema: turnSchema },
      ...errors(401, 404),
    },
  },
  streamTurnEvents: {
    method: 'get',
    path: '/v1/turns/{id}/events',
    operationId: 'streamTurnEvents',
    summary:
      'Server-Sent Events for a turn when Accept includes text/event-stream (replay after Last-Event-Id, then live); the Turn snapshot otherwise.',
    authenticated: true,
    apiKeyInQuery: true,
    params: turnIdParamsSchema,
    headers: { 'Last-Event-Id': 'Resume after this event id.' },
    responses: {
      200: {
        description: 'text/event-stream of events (each `data` is one event payload), or the Turn as JSON',
        schema: turnEventSchema,
        contentType: 'text/event-stream',
      },
      ...errors(400, 401, 404, 429),
    },
  },
  listMemory: {
    method: 'get',
    path: '/v1/memory',
    operationId: 'listMemory',
    summary:
      'List your memory, newest first (created_at, then id), a page at a time. tested_hypothesis entries are left out unless include=tested_hypothesis is passed or category=tested_hypothesis asks for them.',
    authenticated: true,
    query: listMemoryQuerySchema,
    responses: { 200: { description: 'A page of memory entries', schema: memoryListSchema }, ...errors(400, 401) },
  },
  createMemory: {
    method: 'post',
    path: '/v1/memory',
    operationId: 'createMemory',
    summary: 'Write a memory entry directly (source_turn_id is null). tested_hypothesis cannot be written.',
    authenticated: true,
    body: createMemoryRequestSchema,
    responses: {
      201: { description: 'The new memory entry', schema: memorySchema },
      ...errors(400, 401, 409, 413, 415),
    },
  },
  deleteMemory: {
    method: 'delete',
    path: '/v1/memory/{id}',
    operationId: 'deleteMemory',
    summary: 'Delete one of your memory entries, immediately and for good.',
    authenticated: true,
    params: memoryIdParamsSchema,
    responses: { 204: { description: 'Deleted' }, ...errors(401, 404) },
  },
  health: {
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    summary: 'Reachability of Postgres and Temporal.',
    authenticated: false,
    responses: {
      200: { description: 'Everything reachable', schema: healthSchema },
      503: { description: 'Something unreachable', schema: healthSchema },
    },
  },
} satisfies Record<string, RouteContract>;
