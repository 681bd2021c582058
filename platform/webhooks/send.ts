/**
 * One HTTP attempt of a webhook (docs/webhooks.md#delivery): a POST of the signed JSON body to the checked address
 * (./address-check.ts), through Node's own client, which follows no redirect. The attempt is over after
 * REQUEST_TIMEOUT_MS whatever the receiver does (connecting, answering, trickling a body); of the answer, the status,
 * `Retry-After` and at most RESPONSE_BODY_BYTES of the body are kept, and the rest is not read.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { CheckedAddress } from './address-check';

/** A 2xx within this is a success (the Standard Webhooks' recommendation: answer fast, work later). */
const REQUEST_TIMEOUT_MS = 10_000;
/** What is kept of a receiver's answer, for `npm run webhooks:deliveries`. */
const RESPONSE_BODY_BYTES = 256;

export type SendOutcome =
  | { kind: 'response'; status: number; body: string; retryAfterSeconds: number | null }
  | { kind: 'error'; errorKind: 'timeout' | 'connection' | 'tls'; message: string };

/** `Retry-After` as seconds from `now`: delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  // An HTTP date names its day and month (`Wed, 02 Dec 2026 09:05:00 GMT`); Date.parse would read `-5` as a year.
  if (!/^[A-Za-z]{3}, /.test(trimmed)) return null;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

/** Connects to `address` whatever the host name resolves to now: the name was resolved and checked once. */
function pinnedLookup({ address, family }: CheckedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all)
      (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

function errorKindOf(err: NodeJS.ErrnoException): 'timeout' | 'connection' | 'tls' {
  if (err.name === 'AbortError' || err.name === 'TimeoutError') return 'timeout';
  const code = err.code ?? '';
  if (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL')) return 'tls';
  return 'connection';
}

export function sendWebhook(
  url: URL,
  address: CheckedAddress,
  headers: Record<string, string>,
  body: string,
  now: () => Date = () => new Date(),
): Promise<SendOutcome> {
  const client = url.protocol === 'https:' ? https : http;
  const signal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const request = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        lookup: pinnedLookup(address),
        signal,
        // A keep-alive socket could have been opened to another address: every attempt checks and connects anew.
        agent: false,
      },
      (response) => {
        const kept: Buffer[] = [];
        let size = 0;
        const finish = () => {
          response.destroy();
          settle({
            kind: 'response',
            status: response.statusCode ?? 0,
            body: Buffer.concat(kept).subarray(0, RESPONSE_BODY_BYTES).toString('utf8'),
            retryAfterSeconds: parseRetryAfter(response.headers['retry-after'], now()),
          });
        };
        response.on('data', (chunk: Buffer) => {
          kept.push(chunk);
          size += chunk.length;
          if (size >= RESPONSE_BODY_BYTES) finish();
        });
        response.on('end', finish);
        // The status is in: a body cut short by the deadline or the connection still leaves the answer.
        response.on('error', finish);
        response.on('aborted', finish);
      },
    );
    request.on('error', (err: NodeJS.ErrnoException) =>
      settle({ kind: 'error', errorKind: errorKindOf(err), message: err.code ?? err.name }),
    );
    request.end(body);
  });
}
