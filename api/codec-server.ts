/**
 * The codec server (docs/operations.md#the-codec-server): Temporal's remote codec protocol over the service's
 * payload codec, so that an operator sees a turn's inputs and results decoded in the Temporal Web UI or with
 * `temporal workflow show --codec-endpoint`. For operators only, on a credential of their own (never a
 * user's API key):
 *
 * - `POST /codec/decode` and `POST /codec/encode`, also as `/codec/{namespace}/decode|encode`: a body of
 *   `{ "payloads": [{ "metadata": { name: base64 }, "data": base64 }] }`, answered in the same shape.
 * - Credentials: `Authorization: Bearer <operator token>` (the CLI's `--codec-auth`), or the `amy_codec`
 *   cookie that `POST /codec/login` sets for the Web UI, which sends it when its codec settings include
 *   cross-origin credentials. Operators are named in `AMY_CODEC_OPERATORS` (`name:token,…`).
 * - CORS for the Web UI's origins (`AMY_CODEC_ALLOWED_ORIGINS`), credentials included.
 * - Every request is logged with who, which namespace, which workflow (from the Web UI page that asked, when
 *   it says) and how many payloads; never a payload's content.
 *
 * Encoding takes no workflow context, so `/encode` leaves payloads as they are: the Web UI only encodes what an
 * operator types (a signal's or a query's argument), which is no user's data.
 */
import { timingSafeEqual } from 'node:crypto';
import express, { Router, type Request, type Response } from 'express';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { Logger } from '../platform/logger';
import { ApiError } from './errors';

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** Operator name by token. */
  operators: ReadonlyMap<string, string>;
  /** Origins allowed to call from a browser (the Temporal Web UI's). */
  allowedOrigins: readonly string[];
  logger: Logger;
}

const COOKIE = 'amy_codec';
const LOGIN_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Amy codec server</title></head>
<body style="font: 15px system-ui; margin: 3em">
<h1>Amy codec server</h1>
<p>Sign in with your operator token to see turns decoded in the Temporal Web UI.</p>
<form method="post" action="/codec/login">
<label>Operator token <input name="token" type="password" autocomplete="off" required></label>
<button type="submit">Sign in</button>
</form>
</body></html>
`;
const MAX_BODY = '4mb';

/** `name:token,name:token` → token → name; a token shorter than 24 characters is refused. */
export function parseCodecOperators(spec: string | undefined): Map<string, string> {
  const operators = new Map<string, string>();
  for (const entry of (spec ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const at = entry.indexOf(':');
    const [name, token] = [entry.slice(0, at), entry.slice(at + 1)];
    if (at < 1 || token.length < 24) {
      throw new Error('AMY_CODEC_OPERATORS: each entry is name:token, the token at least 24 characters');
    }
    operators.set(token, name);
  }
  return operators;
}

function tokenOf(req: Request): string | null {
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
  if (bearer) return bearer;
  const cookie = (req.get('cookie') ?? '')
    .split(';')
    .map((c) => c.trim())
    .find((c) => c.startsWith(`${COOKIE}=`));
  return cookie ? decodeURIComponent(cookie.slice(COOKIE.length + 1)) : null;
}

/** The operator a token names, compared in constant time. */
function operatorOf(operators: ReadonlyMap<string, string>, token: string | null): string | null {
  if (!token) return null;
  const given = Buffer.from(token);
  for (const [known, name] of operators) {
    const expected = Buffer.from(known);
    if (expected.length === given.length && timingSafeEqual(expected, given)) return name;
  }
  return null;
}

/** The workflow the Web UI page that asked is about (`…/workflows/<id>/…` in its address), when it says. */
function workflowOf(req: Request): string | null {
  const page = req.get('referer');
  return page ? (/\/workflows\/([^/?#]+)/.exec(new URL(page, 'http://x').pathname)?.[1] ?? null) : null;
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

export function codecServerRoutes(options: CodecServerOptions | null): Router {
  const router = Router();
  router.use('/codec', (req, res, next) => {
    const origin = req.get('origin');
    if (origin && options?.allowedOrigins.includes(origin)) {
      res.set({
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Credentials': 'true',
        'Access-Control-Allow-Headers': 'Content-Type, X-Namespace, Authorization',
        'Access-Control-Allow-Methods': 'POST, OPTIONS',
        Vary: 'Origin',
      });
    }
    if (req.method === 'OPTIONS') return void res.status(204).end();
    if (!options)
      throw new ApiError('service_unavailable', 'The codec server is off: set AMY_CODEC_OPERATORS to enable it.');
    next();
  });

  // A page to sign in from the browser the Web UI runs in: the cookie goes with the Web UI's codec requests.
  router.get('/codec/login', (_req, res) => {
    res.set('Content-Security-Policy', "default-src 'none'; form-action 'self'; style-src 'unsafe-inline'");
    res.type('html').send(LOGIN_PAGE);
  });

  router.post('/codec/login', express.urlencoded({ extended: false, limit: '4kb' }), (req, res) => {
    const token = String((req.body as { token?: unknown })?.token ?? '');
    const operator = operatorOf(options!.operators, token);
    if (!operator) throw new ApiError('invalid_api_key', 'That is not an operator token of this codec server.');
    options!.logger.info('codec server login', { operator });
    res.set('Set-Cookie', `${COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Lax; Path=/codec; Max-Age=43200`);
    res.type('text/plain').send(`Signed in to the codec server as ${operator}.\n`);
  });

  const codecRoute = (direction: 'decode' | 'encode') => async (req: Request, res: Response) => {
    const operator = operatorOf(options!.operators, tokenOf(req));
    if (!operator) throw new ApiError('authentication_required', 'The codec server needs an operator token.');
    const payloads = payloadsOf(req.body);
    const namespace = req.params.namespace ?? req.get('x-namespace') ?? null;
    options!.logger.info(`codec server ${direction}`, {
      operator,
      namespace,
      workflow_id: workflowOf(req),
      payloads: payloads.length,
    });
    const out = direction === 'decode' ? await options!.codec.decode(payloads) : payloads;
    res.json({ payloads: out.map(toWire) });
  };
  const json = express.json({ limit: MAX_BODY });
  router.post('/codec/decode', json, codecRoute('decode'));
  router.post('/codec/encode', json, codecRoute('encode'));
  router.post('/codec/:namespace/decode', json, codecRoute('decode'));
  router.post('/codec/:namespace/encode', json, codecRoute('encode'));
  return router;
}
