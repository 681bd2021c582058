/**
 * The OpenAPI document says what POST /v1/turns answers at a cost cap: a 429 whose envelope may carry
 * `cost_cap_exceeded`, with the Retry-After header.
 */
import { buildOpenApiDocument } from '../../api/openapi';

test('POST /v1/turns documents 429 cost_cap_exceeded with Retry-After', () => {
  const createTurn = buildOpenApiDocument().paths['/v1/turns'].post as {
    responses: Record<string, { description: string; headers?: Record<string, unknown>; content: unknown }>;
  };
  const tooMany = createTurn.responses['429'];
  expect(tooMany.description).toContain('cost_cap_exceeded');
  expect(tooMany.headers).toEqual({
    'Retry-After': {
      description: expect.stringContaining('cost_cap_exceeded'),
      schema: { type: 'integer', minimum: 1 },
    },
    'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
  });
  const schema = JSON.stringify(tooMany.content);
  expect(schema).toContain('"cost_cap_exceeded"');
  expect(schema).toContain('"concurrency_limit_exceeded"');
});
