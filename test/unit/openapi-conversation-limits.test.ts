/**
 * The OpenAPI document states the limits of a conversation as the API applies them
 * (contracts/conversation-limits.ts): at most 100 messages of 20,000 characters in the request schema, and,
 * on the 413 of POST /v1/turns, the body limit derived from them, which is that route's alone.
 */
import { buildOpenApiDocument } from '../../api/openapi';
import { MAX_CREATE_TURN_BODY_BYTES, MAX_MESSAGE_CHARS, MAX_MESSAGES } from '../../contracts/conversation-limits';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const doc = buildOpenApiDocument() as Json;
const createTurn = doc.paths['/v1/turns'].post;

test('the request schema takes 1 to 100 messages of 1 to 20,000 characters', () => {
  const messages = createTurn.requestBody.content['application/json'].schema.properties.messages;
  expect(messages).toMatchObject({ type: 'array', minItems: 1, maxItems: MAX_MESSAGES });
  expect(messages.items.properties.content).toMatchObject({ minLength: 1, maxLength: MAX_MESSAGE_CHARS });
  expect(messages.items.properties.content.description).toMatch(/code points/);
});

test("the 413 of POST /v1/turns names its body limit, and no other route's does", () => {
  expect(createTurn.responses['413'].description).toContain(`${MAX_CREATE_TURN_BODY_BYTES} bytes`);
  const others = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([method]) => !(path === '/v1/turns' && method === 'post'))
      .map(([method, operation]) => [method, path, operation.responses['413']?.description ?? null]),
  );
  expect(others.length).toBeGreaterThan(5);
  for (const [method, path, description] of others) {
    expect([method, path, description?.includes(String(MAX_CREATE_TURN_BODY_BYTES)) ?? false]).toEqual([
      method,
      path,
      false,
    ]);
  }
});
