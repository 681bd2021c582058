import type { IncomingMessage, ServerResponse } from 'node:http';

/** Anthropic's error types, by the status they come with. */
export type AnthropicErrorType =
  'invalid_request_error' | 'not_found_error' | 'request_too_large' | 'api_error' | 'overloaded_error';

export class ScriptedHttpError extends Error {
  override name = 'ScriptedHttpError';
  constructor(
    readonly status: number,
    readonly type: AnthropicErrorType,
    message: string,
  ) {
    super(message);
  }
}

/** The real API accepts up to 32 MB; anything near that from our own code is a bug worth a 413. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new ScriptedHttpError(413, 'request_too_large', 'Request exceeds 32 MB');
    chunks.push(chunk as Buffer);
  }
  const raw = Buffer.concat(chunks).toString('utf8');
  if (raw.trim() === '') throw new ScriptedHttpError(400, 'invalid_request_error', 'Request body is empty');
  try {
    return JSON.parse(raw);
  } catch {
    throw new ScriptedHttpError(400, 'invalid_request_error', 'Request body is not valid JSON');
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Anthropic's error body: `{"type":"error","error":{"type":…,"message":…}}`. */
export function sendApiError(res: ServerResponse, status: number, type: AnthropicErrorType, message: string): void {
  sendJson(res, status, { type: 'error', error: { type, message } });
}

/** Waits `ms`, or less if the client goes away first, so nothing keeps running for a closed socket. */
export function pause(ms: number, closed: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (closed.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      closed.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    closed.addEventListener('abort', done, { once: true });
  });
}

/** Resolves once the chunk has been handed to the socket, so a deliberate cut-off comes after it. */
export function writeChunk(res: ServerResponse, chunk: string): Promise<void> {
  return new Promise((resolve, reject) => res.write(chunk, (err) => (err ? reject(err) : resolve())));
}
