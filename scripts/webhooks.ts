/**
 * An operator's webhook endpoints and deliveries (docs/webhooks.md), one command each:
 *
 *   npm run webhooks:add -- --url <url> [--events <type,…>]     registers an endpoint; prints its id and, on the
 *                                                                last line, its signing secret (shown once)
 *   npm run webhooks:list                                        every endpoint, disabled ones included
 *   npm run webhooks:remove -- <endpoint id>                     deletes it and its deliveries' records
 *   npm run webhooks:rotate-secret -- <endpoint id> [--grace-hours <n>]
 *                                                                a new secret (last line); the old one still signs
 *                                                                alongside it for n hours (24 by default; 0: no more)
 *   npm run webhooks:deliveries -- [--endpoint <id>] [--failed] [--limit <n>]
 *                                                                the latest deliveries, each with its attempts
 *   npm run webhooks:redeliver -- <delivery id>                  the same event (same webhook-id) sent again to the
 *                                                                same endpoint, as a new delivery the worker starts
 *
 * URLs must be https and resolve to public addresses unless AMY_WEBHOOKS_ALLOW_PRIVATE=1; against the local stack
 * (`npm start`, no DATABASE_URL set) the commands allow private receivers, as the stack does. Exit 0 when done,
 * 1 with `error: …` otherwise.
 */
import { parseArgs } from 'node:util';
import { WEBHOOK_EVENT_TYPES } from '../contracts/webhooks';
import { loadMasterKeyring, MasterKeyConfigError } from '../platform/crypto/master-key';
import { createPgPool } from '../platform/pg-pool';
import { WebhookAddressRefusedError } from '../platform/webhooks/address-check';
import {
  listDeliveries,
  redeliverWebhook,
  UnknownWebhookDeliveryError,
  WebhookRedeliveryRefusedError,
  type DeliveryListing,
} from '../platform/webhooks/deliveries';
import {
  addWebhookEndpoint,
  DEFAULT_EVENT_TYPES,
  listWebhookEndpoints,
  parseEventTypes,
  removeWebhookEndpoint,
  rotateWebhookSecret,
  UnknownWebhookEndpointError,
  UnknownWebhookEventTypeError,
  type WebhookEndpointSummary,
} from '../platform/webhooks/endpoints';
import { WebhookSecretUnavailableError } from '../platform/webhooks/secrets';
import { CliError, failCommand, masterKeyEnv, resolveDatabaseUrl } from './cli-env';

const USAGE: Record<string, string> = {
  add: `usage: npm run webhooks:add -- --url <url> [--events <type,…>]\n  event types: ${WEBHOOK_EVENT_TYPES.join(', ')} (default: ${DEFAULT_EVENT_TYPES.join(',')})`,
  list: 'usage: npm run webhooks:list',
  remove: 'usage: npm run webhooks:remove -- <endpoint id>',
  'rotate-secret': 'usage: npm run webhooks:rotate-secret -- <endpoint id> [--grace-hours <n>]  (default 24)',
  deliveries: 'usage: npm run webhooks:deliveries -- [--endpoint <id>] [--failed] [--limit <n>]  (default 50)',
  redeliver: 'usage: npm run webhooks:redeliver -- <delivery id>',
};

const OPTIONS = {
  add: { url: { type: 'string' }, events: { type: 'string' } },
  list: {},
  remove: {},
  'rotate-secret': { 'grace-hours': { type: 'string' } },
  deliveries: { endpoint: { type: 'string' }, failed: { type: 'boolean' }, limit: { type: 'string' } },
  redeliver: {},
} as const;
const POSITIONALS: Record<string, number> = {
  add: 0,
  list: 0,
  remove: 1,
  'rotate-secret': 1,
  deliveries: 0,
  redeliver: 1,
};

const GRACE_HOURS_MAX = 30 * 24;

type Command = keyof typeof OPTIONS;

function parseCommand(argv: string[]) {
  const [command = '', ...args] = argv;
  if (!Object.hasOwn(OPTIONS, command)) {
    throw new CliError(`unknown command ${JSON.stringify(command)}: ${Object.keys(OPTIONS).join(', ')}`);
  }
  const usage = USAGE[command];
  if (args.includes('--help') || args.includes('-h')) return { command: command as Command, help: usage };
  let parsed;
  try {
    parsed = parseArgs({ args, options: OPTIONS[command as Command], allowPositionals: true, strict: true });
  } catch (err) {
    throw new CliError(`${(err as Error).message}\n${usage}`);
  }
  if (parsed.positionals.length !== POSITIONALS[command]) throw new CliError(usage);
  return {
    command: command as Command,
    values: parsed.values as Record<string, string | boolean | undefined>,
    positionals: parsed.positionals,
    usage,
  };
}

function wholeNumber(raw: string | boolean | undefined, name: string, max: number, usage: string): number | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) > max) {
    throw new CliError(`--${name} takes a whole number from 0 to ${max}\n${usage}`);
  }
  return Number(raw);
}

const iso = (at: Date | string | null) => (at ? new Date(at).toISOString() : '-');

function describeEndpoint(e: WebhookEndpointSummary): string {
  const state = e.disabled_at ? `disabled ${iso(e.disabled_at)} (${e.disabled_reason ?? 'no reason'})` : 'enabled';
  const grace = e.previous_secret_expires_at
    ? `  previous secret signs until ${iso(e.previous_secret_expires_at)}`
    : '';
  return `${e.id}  ${e.url}  ${e.event_types.join(',')}  created ${iso(e.created_at)}  ${state}${grace}`;
}

function describeDelivery(d: DeliveryListing): string {
  const head =
    `${d.id}  ${d.event_type} ${d.event_id} → ${d.endpoint_id}${d.sequence ? ` (redelivery ${d.sequence})` : ''}  ` +
    `${d.status}  ${d.attempts} attempt(s)  created ${iso(d.created_at)}`;
  const attempts = d.attempt_rows.map((a) => {
    const answer =
      a.response_status === null
        ? (a.error_kind ?? 'in flight')
        : `${a.response_status}${a.error_kind ? ` (${a.error_kind})` : ''}`;
    const latency = a.latency_ms === null ? '' : `  ${a.latency_ms} ms`;
    const body = a.response_body ? `  ${JSON.stringify(a.response_body)}` : '';
    return `    #${a.n}  ${iso(a.started_at)}  ${answer}${latency}${body}`;
  });
  return [head, ...attempts].join('\n');
}

async function run() {
  const parsed = parseCommand(process.argv.slice(2));
  if ('help' in parsed) {
    console.log(parsed.help);
    return;
  }
  const { command, values, positionals, usage } = parsed;
  // Validated before anything is opened.
  const graceHours = wholeNumber(values['grace-hours'], 'grace-hours', GRACE_HOURS_MAX, usage) ?? 24;
  const limit = wholeNumber(values.limit, 'limit', 1000, usage) ?? 50;
  const eventTypes = typeof values.events === 'string' ? parseEventTypes(values.events) : DEFAULT_EVENT_TYPES;
  if (command === 'add' && typeof values.url !== 'string') throw new CliError(`--url is required\n${usage}`);

  const env = masterKeyEnv();
  const allowPrivate =
    env.AMY_WEBHOOKS_ALLOW_PRIVATE === '1' || (env.AMY_WEBHOOKS_ALLOW_PRIVATE === undefined && !env.DATABASE_URL);
  const keyring = () => loadMasterKeyring(env);
  const pool = createPgPool(resolveDatabaseUrl(env), 2);
  try {
    switch (command) {
      case 'add': {
        const { endpoint, secret } = await addWebhookEndpoint(
          pool,
          keyring(),
          { allowPrivate },
          {
            url: values.url as string,
            eventTypes,
          },
        );
        console.log(`Added webhook endpoint ${endpoint.id}: ${endpoint.url} (${endpoint.event_types.join(', ')}).`);
        console.log('Its signing secret, shown only this once (the receiver verifies every request with it):');
        console.log(secret);
        break;
      }
      case 'list': {
        const endpoints = await listWebhookEndpoints(pool);
        console.log(
          endpoints.length ? endpoints.map(describeEndpoint).join('\n') : 'no webhook endpoints (npm run webhooks:add)',
        );
        break;
      }
      case 'remove': {
        await removeWebhookEndpoint(pool, positionals[0]);
        console.log(
          `Removed webhook endpoint ${positionals[0]}; its pending deliveries stop before their next attempt.`,
        );
        break;
      }
      case 'rotate-secret': {
        const { secret, previousExpiresAt } = await rotateWebhookSecret(
          pool,
          keyring(),
          positionals[0],
          graceHours * 3600,
        );
        console.log(
          previousExpiresAt
            ? `Rotated the secret of ${positionals[0]}: the previous one also signs until ${iso(previousExpiresAt)}.`
            : `Rotated the secret of ${positionals[0]}: the previous one no longer signs.`,
        );
        console.log('The new signing secret, shown only this once:');
        console.log(secret);
        break;
      }
      case 'deliveries': {
        const deliveries = await listDeliveries(pool, {
          endpointId: values.endpoint as string | undefined,
          failed: values.failed === true,
          limit,
        });
        console.log(deliveries.length ? deliveries.map(describeDelivery).join('\n') : 'no webhook deliveries');
        break;
      }
      case 'redeliver': {
        const { id, sequence } = await redeliverWebhook(pool, positionals[0]);
        console.log(
          `Redelivery ${id} (sequence ${sequence}) of ${positionals[0]}'s event: a worker sends it within seconds.`,
        );
        break;
      }
    }
  } finally {
    await pool.end();
  }
}

run().catch((err) =>
  failCommand(err, [
    UnknownWebhookEndpointError,
    UnknownWebhookEventTypeError,
    UnknownWebhookDeliveryError,
    WebhookRedeliveryRefusedError,
    WebhookAddressRefusedError,
    WebhookSecretUnavailableError,
    MasterKeyConfigError,
  ]),
);
