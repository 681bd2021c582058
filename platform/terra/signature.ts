/**
 * Terra's webhook signature (docs/terra.md#signing): the `terra-signature` header is `t=<unix seconds>,v1=<hex>`,
 * the hex being HMAC-SHA256 under the signing secret of `<t>.<raw body>`. The body is checked as the bytes that
 * arrived, before anything parses it, and the timestamp within a tolerance, so a captured request cannot be sent
 * again later. Several `v1` values may come (Terra rolling its secret): one match is enough.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What Terra's own SDK (`terra-api`) tolerates by default: five minutes either way. */
export const DEFAULT_TERRA_SIGNATURE_TOLERANCE_SECONDS = 300;

/** Why a request's signature was refused: a reason for the log, never a value from the request. */
type TerraSignatureRefusal = 'missing' | 'malformed' | 'mismatch' | 'too_old' | 'in_the_future';

export type TerraSignatureCheck = { ok: true; timestamp: number } | { ok: false; reason: TerraSignatureRefusal };

const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/** The `t` and `v1` parts of a header; null when it is not of that form. */
function parseHeader(header: string): { timestamp: number; signatures: string[] } | null {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at < 0) return null;
    const name = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (name === 't') {
      if (!/^\d{1,12}$/.test(value)) return null;
      timestamp = Number(value);
    } else if (name === 'v1') {
      if (!HEX_SHA256.test(value)) return null;
      signatures.push(value.toLowerCase());
    }
    // Other schemes (a future v2) are ignored, as Terra's SDK does.
  }
  return timestamp === null || signatures.length === 0 ? null : { timestamp, signatures };
}

function signTerraPayload(rawBody: Buffer | string, timestamp: number, secret: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/** Checks a request's `terra-signature` header against its raw body and the signing secret. */
export function checkTerraSignature(
  rawBody: Buffer,
  header: string | undefined,
  secret: string,
  options: { nowSeconds: number; toleranceSeconds: number },
): TerraSignatureCheck {
  if (!header) return { ok: false, reason: 'missing' };
  const parsed = parseHeader(header);
  if (!parsed) return { ok: false, reason: 'malformed' };
  const expected = Buffer.from(signTerraPayload(rawBody, parsed.timestamp, secret), 'hex');
  const matches = parsed.signatures.some((signature) => timingSafeEqual(Buffer.from(signature, 'hex'), expected));
  if (!matches) return { ok: false, reason: 'mismatch' };
  const age = options.nowSeconds - parsed.timestamp;
  if (age > options.toleranceSeconds) return { ok: false, reason: 'too_old' };
  if (-age > options.toleranceSeconds) return { ok: false, reason: 'in_the_future' };
  return { ok: true, timestamp: parsed.timestamp };
}
