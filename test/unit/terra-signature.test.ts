/**
 * The receiver's signature check (platform/terra/signature.ts) agrees with Terra's own SDK (`terra-api`'s
 * verifyTerraWebhookSignature) on every case: a good signature, several v1 values, a changed body, another secret,
 * stale and future timestamps, and headers that are not Terra's form.
 */
import { createHmac } from 'node:crypto';
import { verifyTerraWebhookSignature } from 'terra-api';
import { checkTerraSignature } from '../../platform/terra/signature';

const SECRET = 'whsec-like-terra-secret';
const BODY = JSON.stringify({ type: 'daily', user: { user_id: 'u', provider: 'GARMIN' }, data: [] });
const NOW = 1_780_000_000;
const sign = (body: string, t: number, secret = SECRET) =>
  createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

async function terraSays(body: string, header: string): Promise<boolean> {
  // The SDK reads the clock itself: it is given headers timed against now, and ours the same offset from NOW.
  return verifyTerraWebhookSignature(body, header, SECRET).then(
    (ok) => ok,
    () => false,
  );
}

const cases: [string, (t: number) => { body: string; header: string }, boolean][] = [
  ['a good signature', (t) => ({ body: BODY, header: `t=${t},v1=${sign(BODY, t)}` }), true],
  [
    'one good v1 among several',
    (t) => ({ body: BODY, header: `t=${t},v1=${'0'.repeat(64)},v1=${sign(BODY, t)}` }),
    true,
  ],
  [
    'the body changed after signing',
    (t) => ({ body: BODY.replace('GARMIN', 'OURA'), header: `t=${t},v1=${sign(BODY, t)}` }),
    false,
  ],
  ['another secret', (t) => ({ body: BODY, header: `t=${t},v1=${sign(BODY, t, 'other')}` }), false],
  ['a timestamp 301 s old', (t) => ({ body: BODY, header: `t=${t - 301},v1=${sign(BODY, t - 301)}` }), false],
  ['a timestamp 301 s ahead', (t) => ({ body: BODY, header: `t=${t + 301},v1=${sign(BODY, t + 301)}` }), false],
  ['no v1', (t) => ({ body: BODY, header: `t=${t}` }), false],
  ['no timestamp', (t) => ({ body: BODY, header: `v1=${sign(BODY, t)}` }), false],
  [
    'a signature over the body alone',
    () => ({ body: BODY, header: `t=${NOW},v1=${createHmac('sha256', SECRET).update(BODY).digest('hex')}` }),
    false,
  ],
];

test.each(cases)('%s: ours and Terra’s SDK agree', async (_what, build, expected) => {
  const now = Math.floor(Date.now() / 1000);
  const forTerra = build(now);
  expect(await terraSays(forTerra.body, forTerra.header)).toBe(expected);
  const forUs = build(NOW);
  const check = checkTerraSignature(Buffer.from(forUs.body), forUs.header, SECRET, {
    nowSeconds: NOW,
    toleranceSeconds: 300,
  });
  expect(check.ok).toBe(expected);
});

test('each refusal names its reason, never a value from the request', () => {
  const at = (header: string | undefined, body = BODY) =>
    checkTerraSignature(Buffer.from(body), header, SECRET, { nowSeconds: NOW, toleranceSeconds: 300 });
  expect(at(undefined)).toEqual({ ok: false, reason: 'missing' });
  expect(at('garbage')).toEqual({ ok: false, reason: 'malformed' });
  expect(at(`t=${NOW},v1=xyz`)).toEqual({ ok: false, reason: 'malformed' });
  expect(at(`t=${NOW},v1=${sign(BODY, NOW, 'other')}`)).toEqual({ ok: false, reason: 'mismatch' });
  expect(at(`t=${NOW - 400},v1=${sign(BODY, NOW - 400)}`)).toEqual({ ok: false, reason: 'too_old' });
  expect(at(`t=${NOW + 400},v1=${sign(BODY, NOW + 400)}`)).toEqual({ ok: false, reason: 'in_the_future' });
  expect(at(`t=${NOW},v1=${sign(BODY, NOW)}`)).toEqual({ ok: true, timestamp: NOW });
});
