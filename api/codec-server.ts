/**
 * The codec server (docs/operations.md#the-codec-server): Temporal's remote codec protocol over the service's
 * payload codec, so that an operator sees a turn's inputs and results decoded in the Temporal Web UI or with
 * `temporal workflow show --codec-endpoint`. An operator tool, not a public route: it answers on a listener of
 * its own (AMY_CODEC_HOST:AMY_CODEC_PORT, loopback by default), never on the API's public port, and only to
 * operators, on a credential of their own (never a user's API key):
 *
 * - `POST /codec/decode` and `POST /codec/encode`, also as `/codec/{namespace}/decode|encode`: a body of
 *   `{ "payloads": [{ "metadata": { name: base64 }, "data": base64 }] }`, answered in the same shape.
 * - Credentials: `Authorization: Bearer <operator token>` (the CLI's `--codec-auth`), or a session: signing in
 *   at `/codec/login` with the token sets the `amy_codec_session` cookie to a random session id (./codec/sessions.ts),
 *   which the Web UI sends when its codec settings include cross-origin credentials. `/codec/logout` ends it.
 * - Wrong tokens are throttled per client address and overall (./codec/sign-in-throttle.ts).
 * - CORS for the Web UI's origins (`AMY_CODEC_ALLOWED_ORIGINS`), credentials included.
 * - Every decode is recorded before it is done (./codec/decode-audit.ts) and logged: who, from where, which
 *   namespace and workflow, and the data keys and users the payloads belong to; never a payload's content.
 *
 * The cookie is `Secure; SameSite=None` when the codec server's public URL (AMY_CODEC_PUBLIC_URL, what the
 * operators' browsers use, through a TLS proxy) is https: the Web UI may then be on another site and still send
 * it, while CORS keeps other origins from reading an answer. Over plain http, where a browser refuses
 * `SameSite=None` without `Secure`, it is `SameSite=Strict`: the Web UI must then be the same site, as on
 * loopback (127.0.0.1:8233 and 127.0.0.1:8234: ports do not make another site).
 *
 * Encoding takes no workflow context, so `/encode` leaves payloads as they are: the Web UI only encodes what an
 * operator types (a signal's or a query's argument), which is no user's data.
 */
import http from 'node:http';
import express, { type Request, type Response } from 'express';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { Pool } from 'pg';
import { newId } from '../platform/ids';
import type { Logger } from '../platform/logger';
import { refuseApiKeyInUrl } from './auth';
import { deleteExpiredDecodeAudit, recordDecode } from './codec/decode-audit';
import type { CodecOperators } from './codec/operators';
import {
  CODEC_SESSION_SECONDS,
  codecSessionOf,
  deleteExpiredCodecSessions,
  endCodecSession,
  startCodecSession,
} from './codec/sessions';
import { forgetPastSignInFailures, recordSignInFailure, signInRefusal } from './codec/sign-in-throttle';
import { ApiError, errorMiddleware } from './errors';

export interface CodecServerOptions {
  codec: PayloadCodec;
  pool: Pool;
  operators: CodecOperators;
  /** Origins allowed to call from a browser (the Temporal Web UI's). */
  allowedOrigins: readonly string[];
  /**
   * The codec endpoint as operators' browsers reach it (`…/codec`): its path is the cookie's, and https makes the
   * cookie Secure.
   */
  publicUrl: URL;
  /** How long a decode's audit row is kept. */
  auditRetentionDays: number;
  logger: Logger;
}

const COOKIE = 'amy_codec_session';
const MAX_BODY = '4mb';
/** Expired sessions, past sign-in failures and audit rows past their retention go this often, and at start. */
const HOUSEKEEPING_INTERVAL_MS = 60 * 60 * 1000;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A page of the sign-in flow. Its forms post to paths relative to it, so it works behind a proxy's prefix. */
const page = (body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Amy codec server</title></head>
<body style="font: 15px system-ui; margin: 3em">
<h1>Amy codec server</h1>
${body}
</body></html>
`;
const LOGIN_PAGE = page(`<p>Sign in with your operator token to see turns decoded in the Temporal Web UI.</p>
<form method="post" action="login">
<label>Operator token <input name="token" type="password" autocomplete="off" required></label>
<button type="submit">Sign in</button>
</form>
<form method="post" action="logout"><button type="submit">Sign out</button></form>`);
const signedInPage = (operator: string) =>
  page(`<p>Signed in to the codec server as ${escapeHtml(operator)}.</p>
<p>The Web UI decodes turns for as long as this session lasts (${CODEC_SESSION_SECONDS / 3600} hours), when its codec
settings include cross-origin credentials.</p>
<form method="post" action="logout"><button type="submit">Sign out</button></form>`);
const SIGNED_OUT_PAGE = page('<p>Signed out of the codec server.</p><p><a href="login">Sign in again</a></p>');
const PAGE_POLICY = "default-src 'none'; form-action 'self'; style-src 'unsafe-inline'";

/** The client's address as the listener sees it (a proxy's, behind one: no forwarded header is trusted). */
function clientAddressOf(req: Request): string {
  const address = req.socket.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
}

const bearerOf = (req: Request) => /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1] ?? null;

function sessionIdOf(req: Request): string | null {
  const cookie = (req.get('cookie') ?? '')
    .split(';')
    .map((c) => c.trim())
    .find((c) => c.startsWith(`${COOKIE}=`));
  return cookie ? cookie.slice(COOKIE.length + 1) : null;
}

/** The workflow the Web UI page that asked is about (`…/workflows/<id>/…` in its address), when it says. */
function workflowOf(req: Request): string | null {
  const page = req.get('referer');
  if (!page) return null;
  try {
    const id = /\/workflows\/([^/?#]+)/.exec(new URL(page, 'http://x').pathname)?.[1];
    return id === undefined ? null : decodeURIComponent(id);
  } catch {
    return null;
  }
}

interface WirePayload {
  metadata?: Record<string, string>;
  data?: string;
}

const fromWire = (p: WirePayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});

const toWire = (p: Payload): WirePayload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

function payloadsOf(body: unknown): Payload[] {
  const payloads = (body as { payloads?: unknown } | null)?.payloads;
  const valid =
    Array.isArray(payloads) &&
    payloads.every(
      (p) =>
        p !== null &&
        typeof p === 'object' &&
        (p.data === undefined || typeof p.data === 'string') &&
        (p.metadata === undefined ||
          (typeof p.metadata === 'object' && Object.values(p.metadata as object).every((v) => typeof v === 'string'))),
    );
  if (!valid)
    throw new ApiError('invalid_request', 'The body must be { "payloads": [{ "metadata": {…}, "data": "…" }] }.');
  return (payloads as WirePayload[]).map(fromWire);
}

/** The codec server's routes, under `/codec`, with the request ids and error envelope of the API. */
function createCodecApp(options: CodecServerOptions): express.Express {
  const { pool, operators, logger } = options;
  const secure = options.publicUrl.protocol === 'https:';
  const cookiePath = options.publicUrl.pathname.replace(/\/+$/, '') || '/';
  const cookie = (value: string, maxAgeSeconds: number) =>
    [
      `${COOKIE}=${value}`,
      'HttpOnly',
      `Path=${cookiePath}`,
      `Max-Age=${maxAgeSeconds}`,
      ...(secure ? ['Secure', 'SameSite=None'] : ['SameSite=Strict']),
    ].join('; ');

  /** Refuses a client past the throttle's limits, before its token is looked at. */
  async function refuseIfThrottled(clientAddress: string) {
    const refusal = await signInRefusal(pool, clientAddress);
    if (!refusal) return;
    logger.warn('codec server sign-in throttled', {
      client_address: clientAddress,
      retry_after_seconds: refusal.retryAfterSeconds,
    });
    throw new ApiError(
      'rate_limited',
      `Too many wrong operator tokens: try again in ${refusal.retryAfterSeconds} s.`,
      undefined,
      { 'Retry-After': String(refusal.retryAfterSeconds) },
    );
  }

  /** The operator a token is, or a counted failure. */
  async function operatorByToken(token: string, clientAddress: string) {
    await refuseIfThrottled(clientAddress);
    const operator = operators.byToken(token);
    if (!operator) {
      await recordSignInFailure(pool, clientAddress);
      logger.warn('codec server refused a token', { client_address: clientAddress });
    }
    return operator;
  }

  /** Who is calling: a Bearer token (throttled), else a session that lasts and whose token has not changed. */
  async function authenticate(req: Request): Promise<string> {
    const bearer = bearerOf(req);
    if (bearer !== null) {
      const operator = await operatorByToken(bearer, clientAddressOf(req));
      if (operator) return operator.name;
    } else {
      const sessionId = sessionIdOf(req);
      const session = sessionId ? await codecSessionOf(pool, sessionId) : null;
      if (session && operators.byTokenHash(session.tokenHash)?.name === session.name) return session.name;
    }
    throw new ApiError('authentication_required', 'The codec server needs an operator token or a signed-in session.');
  }

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((_req, res, next) => {
    res.locals.requestId = newId('request');
    res.set('X-Request-Id', res.locals.requestId as string);
    next();
  });
  app.use(refuseApiKeyInUrl);
  app.use('/codec', (req, res, next) => {
    const origin = req.get('origin');
    if (origin && options.allowedOrigins.includes(origin)) {
      res.set({
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Credentials': 'true',
        'Access-Control-Allow-Headers': 'Content-Type, X-Namespace, Authorization',
        'Access-Control-Allow-Methods': 'POST, OPTIONS',
        Vary: 'Origin',
      });
    }
    if (req.method === 'OPTIONS') return void res.status(204).end();
    next();
  });

  // The pages to sign in and out from the browser the Web UI runs in: the cookie goes with its codec requests.
  app.get('/codec/login', (_req, res) => {
    res.set('Content-Security-Policy', PAGE_POLICY).type('html').send(LOGIN_PAGE);
  });
  const form = express.urlencoded({ extended: false, limit: '4kb' });
  app.post('/codec/login', form, async (req, res) => {
    const clientAddress = clientAddressOf(req);
    const operator = await operatorByToken(String((req.body as { token?: unknown })?.token ?? ''), clientAddress);
    if (!operator) throw new ApiError('invalid_api_key', 'That is not an operator token of this codec server.');
    const sessionId = await startCodecSession(pool, operator);
    logger.info('codec server sign-in', { operator: operator.name, client_address: clientAddress });
    res
      .set({ 'Set-Cookie': cookie(sessionId, CODEC_SESSION_SECONDS), 'Content-Security-Policy': PAGE_POLICY })
      .type('html')
      .send(signedInPage(operator.name));
  });
  app.post('/codec/logout', form, async (req, res) => {
    const sessionId = sessionIdOf(req);
    const operator = sessionId ? await endCodecSession(pool, sessionId) : null;
    if (operator) logger.info('codec server sign-out', { operator, client_address: clientAddressOf(req) });
    res
      .set({ 'Set-Cookie': cookie('', 0), 'Content-Security-Policy': PAGE_POLICY })
      .type('html')
      .send(SIGNED_OUT_PAGE);
  });

  const codecRoute = (direction: 'decode' | 'encode') => async (req: Request, res: Response) => {
    const operator = await authenticate(req);
    const payloads = payloadsOf(req.body);
    const fromPath = req.params.namespace;
    const namespace = (typeof fromPath === 'string' ? fromPath : null) ?? req.get('x-namespace') ?? null;
    const who = { operator, client_address: clientAddressOf(req), namespace, workflow_id: workflowOf(req) };
    if (direction === 'encode') {
      logger.info('codec server encode', { ...who, payloads: payloads.length });
      return void res.json({ payloads: payloads.map(toWire) });
    }
    // Recorded before decoding: a decode that cannot be audited is not done.
    const { keyIds, userIds } = await recordDecode(pool, {
      operator,
      clientAddress: who.client_address,
      namespace,
      workflowId: who.workflow_id,
      payloads,
    });
    logger.info('codec server decode', { ...who, payloads: payloads.length, key_ids: keyIds, user_ids: userIds });
    const decoded = await options.codec.decode(payloads);
    res.json({ payloads: decoded.map(toWire) });
  };
  const json = express.json({ limit: MAX_BODY });
  app.post('/codec/decode', json, codecRoute('decode'));
  app.post('/codec/encode', json, codecRoute('encode'));
  app.post('/codec/:namespace/decode', json, codecRoute('decode'));
  app.post('/codec/:namespace/encode', json, codecRoute('encode'));
  app.use((req, _res, next) => next(new ApiError('not_found', `No route for ${req.method} ${req.path}.`)));
  app.use(errorMiddleware(logger));
  return app;
}

export interface CodecServer {
  /** The listener's own address, e.g. `http://127.0.0.1:8234/codec`. */
  url: string;
  close(): Promise<void>;
}

/**
 * The codec server on its own listener. Deletes expired sessions, past sign-in failures and audit rows past their
 * retention at start (before it answers) and every hour.
 */
export async function startCodecServer(
  options: Omit<CodecServerOptions, 'publicUrl'> & { host: string; port: number; publicUrl?: URL },
): Promise<CodecServer> {
  const { pool, logger } = options;
  const housekeeping = async () => {
    const [sessions, failures, audit] = await Promise.all([
      deleteExpiredCodecSessions(pool),
      forgetPastSignInFailures(pool),
      deleteExpiredDecodeAudit(pool, options.auditRetentionDays),
    ]);
    logger.debug('codec server housekeeping', { sessions, sign_in_failures: failures, audit_rows: audit });
  };
  await housekeeping();
  const timer = setInterval(() => {
    housekeeping().catch((err: unknown) =>
      logger.warn('codec server housekeeping failed', { error: err instanceof Error ? err.message : String(err) }),
    );
  }, HOUSEKEEPING_INTERVAL_MS);
  timer.unref();

  let app: express.Express | null = null;
  const server = http.createServer((req, res) => app!(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as { port: number };
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `http://${host}:${port}/codec`;
  // Unless told otherwise, operators reach it where it listens (on every interface: through loopback).
  const publicUrl = options.publicUrl ?? new URL(url.replace(/^http:\/\/(0\.0\.0\.0|\[::\])(?=:)/, 'http://127.0.0.1'));
  app = createCodecApp({ ...options, publicUrl });
  logger.info('codec server listening', { url, public_url: publicUrl.toString() });
  return {
    url,
    async close() {
      clearInterval(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
