/**
 * Every route's contract in one table: the zod schemas the routes validate with, and the source of
 * `/openapi.json`. Tests check responses against the same schemas, so the API cannot drift.
 */
import { accountDeletionSchema } from '../contracts/account';
import { z } from 'zod';
import { ERROR_STATUS, errorBodySchema, errorEnvelopeSchema } from '../contracts/errors';
import { MAX_WAITING_REPLAYS_PER_KEY } from './idempotency';
import { MAX_CREATE_TURN_BODY_BYTES, MAX_MESSAGE_CHARS, MAX_MESSAGES } from '../contracts/conversation-limits';
import { createTurnRequestSchema, listTurnsQuerySchema, turnListSchema, turnSchema } from '../contracts/turn';
import { inputAnswerSchema, inputReceivedSchema } from '../contracts/interaction';
import { findingSeriesResponseSchema } from '../contracts/finding-series';
import { createMemoryRequestSchema, listMemoryQuerySchema, memoryListSchema, memorySchema } from '../contracts/memory';
import {
  MAX_DATA_ROWS_PER_REQUEST,
  dailyListSchema,
  deleteDailyQuerySchema,
  deleteDailyResultSchema,
  deleteLabsQuerySchema,
  deleteLabsResultSchema,
  fhirBundleSchema,
  labResultListSchema,
  listDailyQuerySchema,
  listLabsQuerySchema,
  listWorkoutsQuerySchema,
  profileSchema,
  terraConnectionListSchema,
  upsertDailyRequestSchema,
  upsertLabsRequestSchema,
  upsertResultSchema,
  upsertWorkoutsRequestSchema,
  workoutListSchema,
} from '../contracts/data';

const turnIdParamsSchema = z.object({ id: z.string() }).strict();
const findingParamsSchema = z.object({ id: z.string(), finding_id: z.string() }).strict();
const memoryIdParamsSchema = z.object({ id: z.string() }).strict();
const workoutIdParamsSchema = z.object({ external_id: z.string() }).strict();

export const healthSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  postgres: z.object({ ok: z.boolean(), latency_ms: z.number().nullable(), error: z.string().optional() }),
  temporal: z.object({ ok: z.boolean(), latency_ms: z.number().nullable(), error: z.string().optional() }),
  /** Whether bubblewrap can run on the API's host (checked at most once a minute); never changes `status`. */
  sandbox: z.object({ ok: z.boolean(), error: z.string().optional() }),
});

const turnEventsSnapshotSchema = turnSchema;

/**
 * The event stream's query as the document shows it. The route reads `last_event_id` itself
 * (api/streaming/event-stream.ts, api/streaming/sse-format.ts) and ignores other parameters; `api_key` is a security scheme.
 */
const turnEventsQuerySchema = z.object({
  last_event_id: z
    .string()
    .regex(/^\d{1,9}$/)
    .optional()
    .describe(
      'Resume after this event id, as the Last-Event-Id header does (for clients that cannot set headers); the header wins when both are sent.',
    ),
});

/** A response header the code sends: its description and its value's JSON schema. */
interface HeaderContract {
  description: string;
  schema: Record<string, unknown>;
}

interface ResponseContract {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
  /** Also `text/event-stream`: the turn's events, each described in /openapi.json from the event catalog. */
  eventStream?: boolean;
  /** Response headers the status carries, by name. */
  headers?: Record<string, HeaderContract>;
}

/** Sent with every 429, and with a 409 that passes with time: whole seconds to wait before trying again. */
const RETRY_AFTER: Record<string, HeaderContract> = {
  'Retry-After': {
    description: 'Seconds to wait before sending the request again.',
    schema: { type: 'integer', minimum: 1 },
  },
};

/** Sent with the answer to a creation whose Idempotency-Key had already created the turn (api/idempotency.ts). */
const IDEMPOTENT_REPLAYED: Record<string, HeaderContract> = {
  'Idempotent-Replayed': {
    description:
      'Present, with the value "true", when the Idempotency-Key had already created this turn: nothing was started, the turn is the one the first request created.',
    schema: { type: 'string', enum: ['true'] },
  },
};

export interface RouteContract {
  method: 'get' | 'post' | 'put' | 'delete';
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
  /** Media types the body may also come as besides application/json, each with the schema it holds then. */
  otherBodyTypes?: Record<string, z.ZodType>;
  headers?: Record<string, string>;
  responses: Record<number, ResponseContract>;
}

/**
 * The envelope as a given status carries it: `code` is one of the codes contracts/errors.ts gives that
 * status, so the document says which errors each status means (and a fuzzer checks the pairing).
 */
function errorEnvelopeFor(status: number): z.ZodType {
  const codes = Object.entries(ERROR_STATUS)
    .filter(([, s]) => s === status)
    .map(([code]) => code);
  if (codes.length === 0) return errorEnvelopeSchema;
  return z.object({ error: errorBodySchema.extend({ code: z.enum(codes as [string, ...string[]]) }) });
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is malformed: a field, a header, the query or a JSON body (the envelope names the field); or a memory entry looks like it holds a credential (secret_detected)',
  401: 'No API key, a key that is not valid or revoked, or a key sent in the URL (?api_key=), which only GET /v1/turns/{id}/events accepts',
  404: 'No such resource for this API key',
  409: 'A limit on stored resources is reached (memory_limit_reached), or an answer the turn is not waiting for (input_not_requested, input_already_received)',
  410: 'The question was past its deadline: the turn went on without the answer (input_expired)',
  413: 'The request body is larger than the body limit the operator set (payload_too_large)',
  415: 'The request body is not UTF-8 JSON',
  422: 'The Idempotency-Key was used with another body',
  429: 'A per-user or per-key limit is reached; retry later',
  500: 'An unexpected failure on our side (internal_error); the message says nothing of its cause',
  503: 'A dependency is unavailable; retry shortly',
};

const errors = (...statuses: number[]): Record<number, ResponseContract> =>
  Object.fromEntries(
    statuses.map((s) => [
      s,
      {
        description: ERROR_DESCRIPTIONS[s] ?? 'Error envelope',
        schema: errorEnvelopeFor(s),
        // Every limit this API answers 429 to passes with time, and says when.
        ...(s === 429 ? { headers: RETRY_AFTER } : {}),
      },
    ]),
  );

/**
 * What every Express route under /v1 can answer besides its own errors: it needs a key (401); a JSON
 * body, whatever the method, is parsed before the route runs (400 invalid_json, 413, 415); and an
 * unexpected failure is a 500 in the envelope.
 */
const v1Errors = (...statuses: number[]) => errors(...[...new Set([400, 401, 413, 415, 500, ...statuses])].sort());

/** /openapi.json itself: an OpenAPI 3.0 document (its paths are this table). */
/** A Terra event as the receiver reads it: Terra's own schemas (docs/terra.md), of which only `type` is required here. */
const terraEventSchema = z.looseObject({ type: z.string().min(1) }).meta({
  description:
    "A Terra webhook event as Terra's OpenAPI document defines it (tryterra/openapi, dist/core/v2-bundled.yaml, section webhooks): auth, deauth, user_reauth, access_revoked, permission_change, connection_error, large_request_processing, large_request_sending, daily, sleep, body, activity, lab_report.completed, lab_report.failed, …",
  example: {
    type: 'daily',
    user: {
      user_id: '40f7b0e1-89e2-43ac-a5b8-1e29c8d47cad',
      provider: 'GARMIN',
      reference_id: 'usr_01JD8X3V9K2M4N6P8Q0R2S4T6V',
    },
    data: [],
    version: '2022-03-16',
  },
});
const terraReceiptSchema = z
  .object({
    received: z.literal(true),
    id: z.string().describe("The stored event (tev_…); a redelivery answers the first delivery's id."),
    duplicate: z.boolean().describe('Whether the event was already stored (Terra retried it).'),
  })
  .strict();

const openApiDocumentSchema = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});

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
      'Idempotency-Key': `Makes the request safe to retry: 1-255 visible ASCII characters, unique per request (a UUID). Within 24 h, the same key with the same body gives the same turn; with another body, ${ERROR_STATUS.idempotency_key_reused} idempotency_key_reused. A blocking replay of a turn still in flight waits for its end, at most ${MAX_WAITING_REPLAYS_PER_KEY} at once per key (409 idempotency_key_in_use beyond, with Retry-After).`,
    },
    responses: {
      200: { description: 'The finished turn ("stream": false)', schema: turnSchema, headers: IDEMPOTENT_REPLAYED },
      201: { description: 'The queued turn', schema: turnSchema, headers: IDEMPOTENT_REPLAYED },
      ...v1Errors(422, 429, 503),
      429: {
        description:
          'The user already has the most turns in flight (concurrency_limit_exceeded), created the most turns allowed in a minute (rate_limited), or reached a daily or monthly cost cap (cost_cap_exceeded): nothing was created; retry after Retry-After',
        schema: errorEnvelopeFor(429),
        headers: {
          'Retry-After': {
            description:
              "Seconds to wait before retrying: 5 for concurrency_limit_exceeded; for rate_limited, until the oldest turn counted leaves the minute; for cost_cap_exceeded, until the cap's window ends (midnight UTC, or the first of the next month UTC for the monthly cap).",
            schema: { type: 'integer', minimum: 1 },
          },
        },
      },
      413: {
        ...errors(413)[413],
        description: `The request body is over ${MAX_CREATE_TURN_BODY_BYTES} bytes: more than any conversation within the message limits (${MAX_MESSAGES} messages of ${MAX_MESSAGE_CHARS} characters) takes, however its JSON is written, so it is refused before it is parsed (payload_too_large)`,
      },
      409: {
        ...errors(409)[409],
        description: `A blocking replay ("stream": false) of a turn still in flight, while ${MAX_WAITING_REPLAYS_PER_KEY} requests with its Idempotency-Key already wait for its end in this API process (idempotency_key_in_use)`,
        headers: RETRY_AFTER,
      },
      503: {
        ...errors(503)[503],
        description:
          'service_unavailable: the turn could not be started; or, for "stream": false, the API process is shutting down and its grace ran out while the turn still ran (the turn runs on: send the same request with the same Idempotency-Key to wait for it on another process, or read the Turn at Location)',
        headers: {
          ...RETRY_AFTER,
          Location: {
            description:
              'When a blocking request was cut short by a shutdown: the path of its turn, still running (/v1/turns/{id}).',
            schema: { type: 'string' },
          },
        },
      },
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
    responses: { 200: { description: 'A page of turns', schema: turnListSchema }, ...v1Errors() },
  },
  getTurn: {
    method: 'get',
    path: '/v1/turns/{id}',
    operationId: 'getTurn',
    summary:
      'Read a turn. Works forever after the turn ends. While it is queued or running, `progress` shows its current and completed steps, the agents started and the cost so far (left out if the workflow does not answer within a second).',
    authenticated: true,
    params: turnIdParamsSchema,
    responses: { 200: { description: 'The turn', schema: turnSchema }, ...v1Errors(404) },
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
      ...v1Errors(404),
    },
  },
  answerTurnInput: {
    method: 'post',
    path: '/v1/turns/{id}/input',
    operationId: 'answerTurnInput',
    summary:
      'Answer the question a turn is waiting on (turn.input_required): the request id and one of its options, or text when it allows. Taken once; the turn goes on and turn.input_received follows on its stream.',
    authenticated: true,
    params: turnIdParamsSchema,
    body: inputAnswerSchema,
    headers: {
      'Idempotency-Key':
        'Makes the answer safe to retry: the same key gives the same outcome, applied once; with another answer, 422 idempotency_key_reused.',
    },
    responses: {
      200: { description: 'The answer was taken: what the turn goes on with', schema: inputReceivedSchema },
      ...v1Errors(404, 409, 410, 422),
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
    query: turnEventsQuerySchema,
    headers: { 'Last-Event-Id': 'Resume after this event id (it wins over ?last_event_id=).' },
    responses: {
      200: {
        description:
          'With Accept: text/event-stream, the events: each has `id` (from 1, gapless), `event` (its type) and one line of JSON `data` (its payload); the server closes the stream after the terminal event. Otherwise the Turn as JSON, without progress.',
        schema: turnEventsSnapshotSchema,
        eventStream: true,
      },
      // Served by api/streaming/event-stream.ts, not Express: no body is read, so no 413 or 415.
      ...errors(400, 401, 404, 429, 500),
    },
  },
  getFindingSeries: {
    method: 'get',
    path: '/v1/turns/{id}/findings/{finding_id}/series',
    operationId: 'getFindingSeries',
    summary:
      "The series a finding of the turn was computed from, for a chart: every day of its window from the turn's snapshot of your data, cut as the gates cut it (`{ date, value }`, or `{ date, x, y }` for an association), with the trend's recent period. 404 when the turn is not yours, never read your data, has no such finding, or its workflow history has expired.",
    authenticated: true,
    params: findingParamsSchema,
    responses: {
      200: { description: "The finding's series", schema: findingSeriesResponseSchema },
      ...v1Errors(404, 503),
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
    responses: { 200: { description: 'A page of memory entries', schema: memoryListSchema }, ...v1Errors() },
  },
  createMemory: {
    method: 'post',
    path: '/v1/memory',
    operationId: 'createMemory',
    summary:
      'Write a memory entry directly (source_turn_id is null). tested_hypothesis cannot be written. Text or meta that looks like a credential (an API key, an access token, a password, a private key, a payment card number, a long random string) is refused with 400 secret_detected, whose message names the field and the kind, never the text.',
    authenticated: true,
    body: createMemoryRequestSchema,
    responses: {
      201: { description: 'The new memory entry', schema: memorySchema },
      ...v1Errors(409),
    },
  },
  deleteMemory: {
    method: 'delete',
    path: '/v1/memory/{id}',
    operationId: 'deleteMemory',
    summary: 'Delete one of your memory entries, immediately and for good.',
    authenticated: true,
    params: memoryIdParamsSchema,
    responses: { 204: { description: 'Deleted' }, ...v1Errors(404) },
  },
  deleteAccount: {
    method: 'delete',
    path: '/v1/account',
    operationId: 'deleteAccount',
    summary:
      "Delete your account everywhere, irreversibly: turns (running ones are stopped), their workflow executions, memory, health data and every API key; the account's data keys are destroyed, so no copy of its workflow histories can be decrypted. Answers what was erased and what is kept.",
    authenticated: true,
    responses: {
      200: { description: 'What was erased, and what is kept', schema: accountDeletionSchema },
      ...v1Errors(),
    },
  },
  upsertDaily: {
    method: 'post',
    path: '/v1/data/daily',
    operationId: 'upsertDaily',
    summary: `Send daily summaries, upserted by date: a day sent again replaces the one stored, a metric left out is null. At most ${MAX_DATA_ROWS_PER_REQUEST} rows; if any row is refused (the 400 names it, rows[i].field), none is stored.`,
    authenticated: true,
    body: upsertDailyRequestSchema,
    responses: {
      200: { description: 'How many days were new and how many replaced stored ones', schema: upsertResultSchema },
      ...v1Errors(),
    },
  },
  listDaily: {
    method: 'get',
    path: '/v1/data/daily',
    operationId: 'listDaily',
    summary: 'List your daily summaries from one day to another (both included), oldest first, a page at a time.',
    authenticated: true,
    query: listDailyQuerySchema,
    responses: { 200: { description: 'A page of daily summaries', schema: dailyListSchema }, ...v1Errors() },
  },
  deleteDaily: {
    method: 'delete',
    path: '/v1/data/daily',
    operationId: 'deleteDaily',
    summary: 'Delete your daily summaries from one day to another (both included, both required), for good.',
    authenticated: true,
    query: deleteDailyQuerySchema,
    responses: { 200: { description: 'How many days were deleted', schema: deleteDailyResultSchema }, ...v1Errors() },
  },
  upsertWorkouts: {
    method: 'post',
    path: '/v1/data/workouts',
    operationId: 'upsertWorkouts',
    summary: `Send workouts, upserted by your external_id: the same id again updates the workout. At most ${MAX_DATA_ROWS_PER_REQUEST} rows; if any row is refused (the 400 names it, rows[i].field), none is stored.`,
    authenticated: true,
    body: upsertWorkoutsRequestSchema,
    responses: {
      200: { description: 'How many workouts were new and how many updated', schema: upsertResultSchema },
      ...v1Errors(),
    },
  },
  listWorkouts: {
    method: 'get',
    path: '/v1/data/workouts',
    operationId: 'listWorkouts',
    summary:
      'List your workouts, oldest first (date, then external_id), a page at a time, optionally of one type and between two days.',
    authenticated: true,
    query: listWorkoutsQuerySchema,
    responses: { 200: { description: 'A page of workouts', schema: workoutListSchema }, ...v1Errors() },
  },
  deleteWorkout: {
    method: 'delete',
    path: '/v1/data/workouts/{external_id}',
    operationId: 'deleteWorkout',
    summary: 'Delete one of your workouts by its external_id, for good.',
    authenticated: true,
    params: workoutIdParamsSchema,
    responses: { 204: { description: 'Deleted' }, ...v1Errors(404) },
  },
  upsertLabs: {
    method: 'post',
    path: '/v1/data/labs',
    operationId: 'upsertLabs',
    summary: `Send lab results, as rows or as a FHIR R4 Bundle of Observations (resourceType "Bundle"; also as application/fhir+json). Each value is converted to its biomarker's canonical unit and upserted by biomarker and day: the same biomarker on the same day replaces the value stored. At most ${MAX_DATA_ROWS_PER_REQUEST} rows or entries; if any is refused (the 400 names it, rows[i].field or its path in the bundle), none is stored.`,
    authenticated: true,
    body: upsertLabsRequestSchema,
    otherBodyTypes: { 'application/fhir+json': fhirBundleSchema },
    responses: {
      200: { description: 'How many results were new and how many replaced stored ones', schema: upsertResultSchema },
      ...v1Errors(),
    },
  },
  listLabs: {
    method: 'get',
    path: '/v1/data/labs',
    operationId: 'listLabs',
    summary:
      'List your lab results, oldest first (day, then biomarker), a page at a time, optionally of one biomarker and between two days; each in its canonical unit, with its LOINC code.',
    authenticated: true,
    query: listLabsQuerySchema,
    responses: { 200: { description: 'A page of lab results', schema: labResultListSchema }, ...v1Errors() },
  },
  deleteLabs: {
    method: 'delete',
    path: '/v1/data/labs',
    operationId: 'deleteLabs',
    summary:
      'Delete your lab results from one day to another (both included, both required), of one biomarker or all, for good.',
    authenticated: true,
    query: deleteLabsQuerySchema,
    responses: {
      200: { description: 'How many results were deleted', schema: deleteLabsResultSchema },
      ...v1Errors(),
    },
  },
  getProfile: {
    method: 'get',
    path: '/v1/data/profile',
    operationId: 'getProfile',
    summary: 'Read your health profile (404 when none was written).',
    authenticated: true,
    responses: { 200: { description: 'The profile', schema: profileSchema }, ...v1Errors(404) },
  },
  putProfile: {
    method: 'put',
    path: '/v1/data/profile',
    operationId: 'putProfile',
    summary: 'Write your health profile, replacing the one stored.',
    authenticated: true,
    body: profileSchema,
    responses: { 200: { description: 'The profile as stored', schema: profileSchema }, ...v1Errors() },
  },
  listConnections: {
    method: 'get',
    path: '/v1/data/connections',
    operationId: 'listConnections',
    summary:
      "List the providers you connected through Terra (Garmin, Oura, Whoop, …), each with its status, as Terra's connection events left it: by provider, then Terra user id. Not paged. reauth_required, revoked and error mean no data comes until the user reconnects through Terra's widget; disconnected, that the user removed the connection.",
    authenticated: true,
    responses: {
      200: { description: 'Your connections, none when there are none', schema: terraConnectionListSchema },
      ...v1Errors(),
    },
  },
  receiveTerraEvent: {
    method: 'post',
    path: '/webhooks/terra',
    operationId: 'receiveTerraEvent',
    summary:
      "Terra's webhook receiver (docs/terra.md): for Terra, not for API clients. No API key: the terra-signature header (t=<unix seconds>,v1=<HMAC-SHA256 hex of '<t>.<raw body>' under the signing secret) is checked over the raw body before anything parses it. The event is stored and answered at once; ingestion follows within seconds.",
    authenticated: false,
    body: terraEventSchema,
    headers: {
      'terra-signature': 'Required. t=<unix seconds>,v1=<hex>; x-terra-signature is read too.',
      'terra-reference': "Terra's reference of the event; a large request's chunks start with its reference.",
      'x-terra-ordering-timestamp':
        'When Terra produced the event (Unix ms): an older event never overwrites a newer one.',
    },
    responses: {
      200: { description: 'Stored (or already stored): Terra may forget it', schema: terraReceiptSchema },
      400: { description: 'Signed, but not JSON or not a Terra event', schema: errorEnvelopeFor(400) },
      401: {
        description: 'The terra-signature header is missing, malformed, does not match, or is outside the tolerance',
        schema: errorEnvelopeFor(401),
      },
      413: { description: 'The body is over TERRA_MAX_BODY_BYTES', schema: errorEnvelopeFor(413) },
      500: { description: ERROR_DESCRIPTIONS[500], schema: errorEnvelopeFor(500) },
      503: {
        description: 'No signing secret is configured, or the event could not be stored: Terra retries',
        schema: errorEnvelopeFor(503),
      },
    },
  },
  health: {
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    summary:
      'Reachability of Postgres and Temporal (503 when either is unreachable), and whether the sandbox for data questions can run on this host.',
    authenticated: false,
    responses: {
      200: { description: 'Everything reachable', schema: healthSchema },
      ...errors(401),
      503: { description: 'Something unreachable', schema: healthSchema },
    },
  },
  openApiDocument: {
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This document.',
    authenticated: false,
    responses: {
      200: { description: 'The OpenAPI 3.0 document of this API', schema: openApiDocumentSchema },
      ...errors(401),
    },
  },
} satisfies Record<string, RouteContract>;
