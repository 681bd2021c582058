import { z } from 'zod';
import { eventDataSchemas, TURN_EVENT_TYPES } from '../contracts/event-data';
import { ROUTES, type RouteContract } from './route-table';

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'openapi-3.0' });

/**
 * One Server-Sent Event as a client's parser sees it (`id`, `event`, `data` as text), one variant per
 * event type. OpenAPI 3.0 describes each event of a `text/event-stream` with the media type's schema;
 * `contentMediaType`/`contentSchema` say that `data` is JSON holding that type's payload, so a client
 * or a fuzzer can check each event's payload and not just its framing.
 */
function serverSentEventSchema() {
  return {
    description:
      "One event: `id` is its position in the turn's log (from 1, gapless; send it back as Last-Event-Id to resume), `event` its type, `data` its payload as one line of JSON.",
    oneOf: TURN_EVENT_TYPES.map((type) => ({
      type: 'object',
      required: ['id', 'event', 'data'],
      properties: {
        id: { type: 'string', pattern: '^[1-9][0-9]*$' },
        event: { type: 'string', enum: [type] },
        data: {
          type: 'string',
          contentMediaType: 'application/json',
          contentSchema: jsonSchema(eventDataSchemas[type], 'output'),
        },
      },
    })),
  };
}

/**
 * Sent with every answer, errors and the event stream included (api/app.ts, api/streaming/event-stream.ts, and the
 * refusal of a process that is shutting down in api/server.ts): declared once, and on every response.
 */
const REQUEST_ID_HEADER = {
  description:
    "This answer's id (`req_` and a ULID), also the error envelope's `request_id`: quote it when reporting a problem. An event stream has one for its connection.",
  required: true,
  schema: { type: 'string', pattern: '^req_[0-9A-Z]{26}$' },
};
const REQUEST_ID_REF = { $ref: '#/components/headers/X-Request-Id' };

function responseContent(r: RouteContract['responses'][number]) {
  const content: Record<string, unknown> = {};
  if (r.schema) content[r.contentType ?? 'application/json'] = { schema: jsonSchema(r.schema, 'output') };
  if (r.eventStream) content['text/event-stream'] = { schema: serverSentEventSchema() };
  return {
    ...(Object.keys(content).length ? { content } : {}),
    headers: { 'X-Request-Id': REQUEST_ID_REF, ...r.headers },
  };
}

const DESCRIPTION = [
  'Send your API key as "Authorization: Bearer <key>".',
  "A key in the URL (?api_key=, its name percent-encoded or not) is accepted only by GET /v1/turns/{id}/events, for browsers' EventSource;",
  'every other route refuses it with 401 authentication_required, the routes that need no key (/healthz, /openapi.json) included.',
  'Pages on other origins may call /v1 and /openapi.json from a browser (CORS, preflights included) when the operator allows their origin, any origin by default;',
  'never with credentials (no cookie is read), and the headers X-Request-Id, Retry-After, Idempotent-Replayed and Location are exposed to them.',
].join(' ');

/** The OpenAPI document, generated from the same zod contracts the routes validate with. */
export function buildOpenApiDocument(serverUrl?: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of Object.values(ROUTES) as RouteContract[]) {
    const parameters: unknown[] = [];
    if (route.params) {
      for (const name of Object.keys((route.params as z.ZodObject).shape)) {
        parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
      }
    }
    if (route.query) {
      const query = jsonSchema(route.query, 'input') as {
        properties?: Record<string, { description?: string }>;
        required?: string[];
      };
      for (const [name, { description, ...schema }] of Object.entries(query.properties ?? {})) {
        parameters.push({
          name,
          in: 'query',
          required: query.required?.includes(name) ?? false,
          ...(description ? { description } : {}),
          schema,
        });
      }
    }
    for (const [name, description] of Object.entries(route.headers ?? {})) {
      parameters.push({ name, in: 'header', required: false, description, schema: { type: 'string' } });
    }
    const responses = Object.fromEntries(
      Object.entries(route.responses).map(([status, r]) => [
        status,
        { description: r.description, ...responseContent(r) },
      ]),
    );
    paths[route.path] ??= {};
    paths[route.path][route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.authenticated
        ? { security: [{ bearerAuth: [] }, ...(route.apiKeyInQuery ? [{ apiKeyQuery: [] }] : [])] }
        : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: {
                'application/json': { schema: jsonSchema(route.body, 'input') },
                ...Object.fromEntries(
                  Object.entries(route.otherBodyTypes ?? {}).map(([type, schema]) => [
                    type,
                    { schema: jsonSchema(schema, 'input') },
                  ]),
                ),
              },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Amy turn service', version: '1.0.0', description: DESCRIPTION },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    components: {
      headers: { 'X-Request-Id': REQUEST_ID_HEADER },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer' },
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
      },
    },
    paths,
  };
}
