import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Anthropic's error types, by the status they come with. */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'api_error'
  | 'overloaded_error';

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

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARD_ADDRESSES = ['0.0.0.0', '::'];

/**
 * The Host header values that address this server: a loopback name with its port, and the address it
 * listens on when that is a particular one (not 0.0.0.0 or ::).
 */
export function ownHosts(address: AddressInfo): Set<string> {
  const names = [...LOOPBACK_NAMES];
  if (!WILDCARD_ADDRESSES.includes(address.address))
    names.push(address.family === 'IPv6' ? `[${address.address}]` : address.address);
  return new Set(names.map((name) => `${name}:${address.port}`));
}

/**
 * Why a request may not use the control endpoints, or null when it may. They change what the model
 * answers and show every prompt it was sent, and a web page the user has open can reach a server on
 * the user's loopback: through DNS rebinding (a name of its own that resolves to 127.0.0.1, so the
 * request carries that name as Host) or with a plain cross-origin form post (its Origin is the page's).
 * Test code and scripts (Node's fetch, curl) send the server's own host:port and no Origin.
 */
export function controlRefusal(req: IncomingMessage, hosts: Set<string>): string | null {
  const host = req.headers.host?.toLowerCase();
  const allowed = [...hosts].join(', ');
  if (!host || !hosts.has(host))
    return `The control endpoints answer only requests addressed to this server (Host: ${allowed}), not to ${JSON.stringify(req.headers.host ?? '')}`;
  const origin = req.headers.origin;
  if (origin !== undefined && !hosts.has(origin.toLowerCase().replace(/^http:\/\//, '')))
    return `The control endpoints refuse requests from web pages (Origin ${JSON.stringify(origin)})`;
  return null;
}
