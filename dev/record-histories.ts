/**
 * Records the workflow histories of representative turns into test/histories/, for the replay test
 * that guards workflow determinism. Runs against a live stack (`npm start`, read from
 * .data/stack.json): `npm run histories:record`. A turn's payloads are encrypted in Temporal
 * (docs/operations.md#encrypted-workflow-payloads); they are decoded here, with the stack's master key, so
 * that the recorded histories replay with no key (they hold the demo user's synthetic data only).
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { Pool } from 'pg';
import { createDataKeyStore } from '../platform/crypto/data-keys';
import { loadMasterKeyring } from '../platform/crypto/master-key';
import { createDataConverter } from '../platform/temporal/data-converter';
import { isEncryptedPayload } from '../platform/temporal/encryption-codec';
import { temporalCliPath } from './stack/local-temporal';

const root = path.resolve(__dirname, '..');

/** One turn per workflow path the service runs; later paths add their own line. */
const REPRESENTATIVE_TURNS: Array<{ name: string; message: string }> = [
  { name: 'fallback-thanks', message: 'thanks!' },
  { name: 'investigator-vague', message: 'Is anything interesting in my data?' },
  { name: 'data-question-descriptive', message: 'What is my average resting heart rate over the last 90 days?' },
  { name: 'data-question-correlation', message: 'Are my active zone minutes related to my deep sleep minutes?' },
  { name: 'pattern-1-expert', message: 'What is heart rate variability?' },
  { name: 'pattern-3-expert-with-data', message: 'Is an LDL of 124 something to worry about?' },
  { name: 'pattern-5-coach-with-data', message: 'Help me plan better deep sleep based on my data' },
  { name: 'pattern-6-coach-data-expert', message: 'Help me improve my resting heart rate given my thyroid condition' },
  {
    name: 'reflection-follow-up',
    message: 'My resting heart rate is 70, is that something to worry about? Please double-check it against my data.',
  },
];

interface Stack {
  api_url: string;
  temporal_address: string;
  postgres_url: string;
  anthropic_base_url: string | null;
  demo_api_key: string;
}

async function ask(stack: Stack, message: string): Promise<{ id: string; status: string }> {
  const res = await fetch(`${stack.api_url}/v1/turns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.demo_api_key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: message }], stream: false }),
  });
  return (await res.json()) as { id: string; status: string };
}

/** npm start's master key: the environment's, or the development key file it made under .data. */
const masterKeyEnv = () =>
  process.env.AMY_MASTER_KEY || process.env.AMY_MASTER_KEY_FILE
    ? {}
    : { AMY_MASTER_KEY_FILE: path.join(root, '.data', 'master.key') };

const bytes = (base64: string) => new Uint8Array(Buffer.from(base64, 'base64'));
const base64 = (data: Uint8Array | null | undefined) => Buffer.from(data ?? new Uint8Array()).toString('base64');

type JsonPayload = { metadata: Record<string, string>; data?: string };
const isJsonPayload = (value: unknown): value is JsonPayload =>
  value !== null &&
  typeof value === 'object' &&
  'metadata' in value &&
  typeof (value as JsonPayload).metadata === 'object';

/** The history as the CLI printed it (proto3 JSON, bytes in base64) with every encrypted payload decoded. */
async function decodedHistory(json: unknown, codec: PayloadCodec): Promise<unknown> {
  if (Array.isArray(json)) return Promise.all(json.map((item) => decodedHistory(item, codec)));
  if (json === null || typeof json !== 'object') return json;
  if (isJsonPayload(json)) {
    const payload: Payload = {
      metadata: Object.fromEntries(Object.entries(json.metadata).map(([k, v]) => [k, bytes(v)])),
      data: bytes(json.data ?? ''),
    };
    if (!isEncryptedPayload(payload)) return json;
    const [plain] = await codec.decode([payload]);
    return {
      metadata: Object.fromEntries(Object.entries(plain.metadata ?? {}).map(([k, v]) => [k, base64(v)])),
      data: base64(plain.data),
    };
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) out[key] = await decodedHistory(value, codec);
  return out;
}

async function writeHistory(stack: Stack, name: string, turn: { id: string; status: string }) {
  // The CLI's JSON is the proto3 JSON form that Worker.runReplayHistory reads. Without a run id it
  // shows the latest run: for a retried turn, the reset run, which holds the failed attempt's prefix.
  const history = execFileSync(temporalCliPath(), [
    'workflow',
    'show',
    '--address',
    stack.temporal_address,
    '--workflow-id',
    turn.id,
    '--output',
    'json',
  ]);
  const file = path.join(root, 'test', 'histories', `${name}.json`);
  const decoded = await decodedHistory(JSON.parse(history.toString('utf8')), codecOf(stack));
  fs.writeFileSync(file, `${JSON.stringify(decoded, null, 2)}\n`);
  console.log(`${name}: turn ${turn.id} ended ${turn.status}; history written to ${path.relative(root, file)}`);
}

/**
 * A turn failed by a 500 storm at synthesis (its failed run is recorded), then retried with
 * `npm run turn:retry` once the storm is over (the reset run is recorded).
 */
async function recordFailedThenRetried(stack: Stack) {
  if (!stack.anthropic_base_url) throw new Error('the failed-then-retried history needs the scripted model');
  const fault = { kind: 'server_error', step: 'synthesis', times: 4 };
  await fetch(`${stack.anthropic_base_url}/_control/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(fault),
  });
  const failed = await ask(stack, 'What is heart rate variability?');
  if (failed.status !== 'failed') throw new Error(`expected the turn to fail, it ended ${failed.status}`);
  // The failed run on its own: the workflow's failure path (record the failure, then fail the workflow).
  await writeHistory(stack, 'failed-upstream-unavailable', failed);
  execFileSync(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'scripts', 'turn-retry.ts'), failed.id, '--wait'],
    {
      env: {
        ...process.env,
        ...masterKeyEnv(),
        DATABASE_URL: stack.postgres_url,
        TEMPORAL_ADDRESS: stack.temporal_address,
      },
      stdio: 'inherit',
    },
  );
  await writeHistory(stack, 'failed-then-retried', { id: failed.id, status: 'failed, then completed on retry' });
}

async function run() {
  const stack = JSON.parse(fs.readFileSync(path.join(root, '.data', 'stack.json'), 'utf8')) as Stack;
  for (const { name, message } of REPRESENTATIVE_TURNS) {
    await writeHistory(stack, name, await ask(stack, message));
  }
  await recordFailedThenRetried(stack);
  await pool?.end();
}

let pool: Pool | undefined;
let codec: PayloadCodec | undefined;
/** The stack's codec: its database holds the data keys, under its master key. */
function codecOf(stack: Stack): PayloadCodec {
  if (!codec) {
    pool = new Pool({ connectionString: stack.postgres_url, max: 2 });
    const converter = createDataConverter(
      pool,
      createDataKeyStore(pool, loadMasterKeyring({ ...process.env, ...masterKeyEnv() })),
    );
    codec = converter.payloadCodecs![0];
  }
  return codec;
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
