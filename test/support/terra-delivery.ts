/**
 * Terra's side of a delivery, for the suites: an event signed as Terra signs it (`terra-signature: t=…,v1=…`,
 * HMAC-SHA256 of `<t>.<raw body>`), each signature checked with Terra's own SDK (`terra-api`) before it is sent, and
 * POSTed to the receiver with Terra's headers.
 */
import { createHmac } from 'node:crypto';
import { verifyTerraWebhookSignature, type Terra } from 'terra-api';
import { terraExample } from './terra-fixtures';

export const TERRA_TEST_SECRET = 'terra-signing-secret-for-the-tests';

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** `t=…,v1=…` as Terra computes it. */
export const terraSignature = (body: string, t: number, secret = TERRA_TEST_SECRET) =>
  `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;

/** A header Terra's SDK accepts for this body; throws (failing the suite) if it does not. */
async function signedByTerra(body: string): Promise<string> {
  const header = terraSignature(body, nowSeconds());
  if ((await verifyTerraWebhookSignature(body, header, TERRA_TEST_SECRET)) !== true) {
    throw new Error("Terra's SDK does not accept the test's signature");
  }
  return header;
}

export interface TerraDelivery {
  reference?: string;
  orderedAt?: number;
  /** The signature header as sent, null for none; the SDK-checked one by default. */
  signature?: string | null;
  /** The raw body; `JSON.stringify(event)` by default. */
  body?: string;
}

/** POSTs an event to `<apiUrl>/webhooks/terra` as Terra would. */
export async function deliverToTerraReceiver(apiUrl: string, event: unknown, opts: TerraDelivery = {}) {
  const body = opts.body ?? JSON.stringify(event);
  const signature = opts.signature === undefined ? await signedByTerra(body) : opts.signature;
  const res = await fetch(`${apiUrl}/webhooks/terra`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(signature ? { 'terra-signature': signature } : {}),
      'terra-reference': opts.reference ?? `ref-${Math.random().toString(36).slice(2)}`,
      ...(opts.orderedAt ? { 'x-terra-ordering-timestamp': String(opts.orderedAt) } : {}),
    },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export function asTerraUser(
  user: Terra.TerraUser | undefined,
  userId: string,
  provider: string,
  referenceId: string | null,
) {
  return { ...user, user_id: userId, provider, reference_id: referenceId };
}

/** Terra's daily example, one record per day (steps, and a resting heart rate when given), for a Terra user. */
export function dailyEvent(
  days: { date: string; steps: number; restingHr?: number }[],
  who: { terraUser: string; provider: string; reference: string | null },
) {
  const example = terraExample('daily') as Terra.DailyEvent;
  const [record] = example.data;
  return {
    ...example,
    user: asTerraUser(example.user, who.terraUser, who.provider, who.reference),
    data: days.map((d) => ({
      ...record,
      metadata: {
        ...record.metadata,
        start_time: `${d.date}T00:00:00.000000+01:00`,
        end_time: `${d.date}T23:59:59.000000+01:00`,
      },
      distance_data: { ...record.distance_data, steps: d.steps },
      ...(d.restingHr !== undefined ? { heart_rate_data: { summary: { resting_hr_bpm: d.restingHr } } } : {}),
    })),
  };
}
