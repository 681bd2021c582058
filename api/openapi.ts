import { z } from 'zod';
import { ROUTES, type RouteContract } from './contract';

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'openapi-3.0' });

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
        {
          description: r.description,
          ...(r.schema
            ? { content: { [r.contentType ?? 'application/json']: { schema: jsonSchema(r.schema, 'output') } } }
            : {}),
        },
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
              content: { 'application/json': { schema: jsonSchema(route.body, 'input') } },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Amy turn service', version: '1.0.0' },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer' },
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
      },
    },
    paths,
  };
}
