import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { DEFAULT_GATES_PROCESSES } from './gates';
import { DEFAULT_SANDBOX_CONCURRENCY, WARM_MODES } from './sandbox';
import { MAX_SANDBOX_SLOTS } from './sandbox/bwrap';
import { MAX_COST_CAP_USD } from './cost-caps';
import { DATA_COMMONS_DEFAULT_BASE_URL } from './literature/data-commons';
import { PUBMED_DEFAULT_BASE_URL } from './literature/pubmed';
import { DEFAULT_TERRA_SIGNATURE_TOLERANCE_SECONDS } from './terra/signature';

/** A cost cap in USD: a non-negative amount; unset (or set to nothing) means no cap. */
const costCapUsd = z.preprocess(
  (value) => (value === '' ? undefined : value),
  z.coerce.number().finite().min(0).max(MAX_COST_CAP_USD).optional(),
);

/** What a browser sends as `Origin` for a page, which is what a list of allowed origins is compared with. */
function originProblem(origin: string): string | null {
  if (origin === 'null') return '"null" is the origin of sandboxed and file pages, which any page can take on';
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `${origin} is not an origin (scheme://host[:port])`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${origin} is not an http or https origin`;
  if (url.origin !== origin) {
    return `${origin} is not written as a browser sends it: ${url.origin} (no path, no trailing slash, no default port)`;
  }
  return null;
}

/**
 * The browser origins the API answers CORS for (api/cors.ts, docs/operations.md#browsers-on-other-origins):
 * `*` any origin (the default: every request carries its key itself, nothing ambient), `none` no origin but
 * the API's own, or a comma-separated list of origins, each exactly as a browser sends it.
 */
const corsAllowedOrigins = z
  .string()
  .default('*')
  .transform((value, ctx): '*' | string[] => {
    const setting = value.trim();
    if (setting === '*') return '*';
    if (setting === 'none') return [];
    const origins = setting
      .split(',')
      .map((origin) => origin.trim())
      .filter((origin) => origin !== '');
    if (origins.length === 0) {
      ctx.addIssue({ code: 'custom', message: '`*`, `none`, or a comma-separated list of origins' });
    }
    for (const origin of origins) {
      const problem = originProblem(origin);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }
    return origins;
  });

/**
 * Configuration from the environment, parsed once at start-up. Defaults make `npm start` work on a
 * fresh machine; `npm run api` / `npm run worker` in production set the connection variables.
 */
/** `a, b,,c` → ['a', 'b', 'c']. */
const commaList = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

const configSchema = z.object({
  DATABASE_URL: z.string().url(),
  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('amy-turns'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  /**
   * Where the process serves Prometheus metrics (`GET /metrics`, docs/operations.md#metrics): a listener of
   * its own, apart from the API's public port, with no API key. Unset: no metrics endpoint. Every process
   * on a host needs its own port.
   */
  AMY_METRICS_PORT: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.coerce.number().int().min(0).max(65535).optional(),
  ),
  /**
   * The metrics listener's address: loopback unless an operator chooses otherwise, never the API's HOST (which
   * the API image sets to every interface). A Prometheus in another container needs it set to that
   * container network's address, or `0.0.0.0` on a network only operators reach (docs/operations.md#metrics).
   */
  AMY_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_BASE_URL: z.string().url().optional(),
  /** Real Anthropic when set; otherwise the scripted model server at ANTHROPIC_BASE_URL. */
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: z.string().url().optional(),
  /**
   * The model per role: an alias (`opus`, `sonnet`, `haiku`) or an exact model id, pinned as given
   * (platform/llm/models.ts). The Data Science model is pinned: Sonnet 4.6 writes better pandas than Opus.
   */
  AMY_MODEL: z.string().min(1).default('opus'),
  AMY_FAST_MODEL: z.string().min(1).default('sonnet'),
  AMY_DS_MODEL: z.string().min(1).default('claude-sonnet-4-6'),
  AMY_VALIDATOR_MODEL: z.string().min(1).default('opus'),
  /** The model id each alias resolves to instead of its own (a gateway's id, on OpenRouter say). */
  ANTHROPIC_DEFAULT_OPUS_MODEL: z.string().min(1).optional(),
  ANTHROPIC_DEFAULT_SONNET_MODEL: z.string().min(1).optional(),
  ANTHROPIC_DEFAULT_HAIKU_MODEL: z.string().min(1).optional(),
  AMY_COST_WARN_USD: z.coerce.number().positive().default(0.5),
  /**
   * The default per-user cost caps in USD, over the UTC calendar day and month (platform/cost-caps.ts);
   * unset: no cap. `npm run user:caps` sets a user's own.
   */
  AMY_USER_DAILY_CAP_USD: costCapUsd,
  AMY_USER_MONTHLY_CAP_USD: costCapUsd,
  /** How long after completed_at the SSE replay buffer stays readable. */
  AMY_REPLAY_WINDOW_SECONDS: z.coerce.number().int().positive().default(3600),
  AMY_MAX_INFLIGHT_TURNS: z.coerce.number().int().positive().default(3),
  /**
   * Turns a user may create in any 60 s, counted across API processes (api/tables/turn-rate-limit.ts).
   * Well above a burst that the in-flight cap already refuses (ten at once), so that cap answers first.
   */
  AMY_MAX_TURNS_PER_MINUTE: z.coerce.number().int().positive().default(60),
  /**
   * The bound on one run of a turn's workflow (Temporal's workflowRunTimeout). A run past it is closed
   * by Temporal and the reconciler fails its turn (turn_abandoned), so no turn holds a slot for good.
   * Per run, so a turn retried with `npm run turn:retry` gets the whole bound again.
   */
  AMY_TURN_RUN_TIMEOUT_SECONDS: z.coerce.number().int().positive().default(3600),
  /**
   * How long a streaming POST /v1/turns waits for Temporal to accept the turn's workflow before it answers
   * 201 anyway, the start going on (api/temporal/turn-workflows.ts). 0: it answers once the turn is recorded,
   * so a busy Temporal does not set the latency of every POST.
   */
  AMY_TURN_START_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  AMY_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(256 * 1024),
  /**
   * How long a client may take to send a request's headers, and its whole request (headers and body).
   * Both bound only the receiving: a blocking `"stream": false` turn or an SSE stream answers for as long
   * as it takes. Node requires the header bound to be within the request bound.
   */
  AMY_HEADERS_TIMEOUT_MS: z.coerce.number().int().positive().default(20_000),
  AMY_REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  /** How long an idle keep-alive connection stays open between requests (above a load balancer's 60 s). */
  AMY_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().positive().default(65_000),
  /**
   * Open SSE streams per API key, counted in each API process (not across processes): enough for a
   * console, a CLI and an SDK watching a few turns each; a client that opens more gets a 429.
   */
  AMY_MAX_STREAMS_PER_KEY: z.coerce.number().int().positive().default(20),
  /**
   * Bytes an SSE connection may hold unsent before it is dropped: a reader that stops reading would
   * otherwise make the API buffer the rest of the turn. The client resumes with Last-Event-Id.
   */
  AMY_STREAM_MAX_BUFFERED_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  /**
   * How long a role told to stop (SIGTERM, SIGINT) lets the work it has in hand finish: the worker's
   * running activities (past it they are cancelled and Temporal retries them on another worker), the
   * API's requests (a blocking turn still waiting is then answered 503). With the worker's 10 s to hand
   * back, a role stops within 30 s by default, Kubernetes' default grace. docs/operations.md#deploying
   */
  AMY_SHUTDOWN_GRACE_SECONDS: z.coerce.number().int().min(0).max(3600).default(15),
  /**
   * Worker Versioning (docs/operations.md#deploying): the worker polls as the version
   * `<AMY_DEPLOYMENT_NAME>.<AMY_BUILD_ID>` and every turn it starts stays pinned to it. Both set, or
   * neither (an unversioned worker, as `npm start` runs it).
   */
  AMY_DEPLOYMENT_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,200}$/, 'letters, digits, `-` and `_` only (Temporal joins it to the build id with a `.`)')
    .optional(),
  AMY_BUILD_ID: z
    .string()
    .regex(/^[A-Za-z0-9._+-]{1,200}$/, 'letters, digits, `.`, `_`, `+` and `-` only, e.g. a release tag or git sha')
    .optional(),
  /**
   * Postgres connections per process (API or worker). Every process's pool, plus one LISTEN connection
   * per API process, must fit the server's max_connections (docs/operations.md#worker-capacity).
   */
  AMY_PG_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(20),
  /**
   * What one worker takes on at once (worker/worker-tuning.ts, docs/operations.md#worker-capacity):
   * activity slots (model calls and every other step; 1000), local activities, workflow tasks, the
   * sticky cache of workflows, and pollers per task queue. Unset ones but the first are the SDK's; the
   * activity slots default to 1000, not the SDK's 100, because a turn holds one while it waits on the model.
   */
  AMY_WORKER_MAX_ACTIVITIES: z.coerce.number().int().min(1).max(100_000).default(1000),
  AMY_WORKER_MAX_LOCAL_ACTIVITIES: z.coerce.number().int().min(1).max(100_000).optional(),
  AMY_WORKER_MAX_WORKFLOW_TASKS: z.coerce.number().int().min(2).max(10_000).optional(),
  AMY_WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).max(1_000_000).optional(),
  AMY_WORKER_ACTIVITY_POLLERS: z.coerce.number().int().min(1).max(1000).optional(),
  AMY_WORKER_WORKFLOW_POLLERS: z.coerce.number().int().min(2).max(1000).optional(),
  /** A prebuilt workflow bundle (bundleWorkflowCode output); bundled from workflows/ at start-up otherwise. */
  WORKFLOW_BUNDLE_PATH: z.string().min(1).optional(),
  /** The Python interpreter for the gates and the sandbox; <repo>/.venv/bin/python by default. */
  AMY_PYTHON: z.string().min(1).optional(),
  /** Python gates processes per worker; a request that times out takes down only its own process. */
  AMY_GATES_PROCESSES: z.coerce.number().int().min(1).max(64).default(DEFAULT_GATES_PROCESSES),
  /** Sandbox runs at once per worker (each up to a core and its memory limit); the rest wait their turn. */
  AMY_SANDBOX_CONCURRENCY: z.coerce.number().int().min(1).max(MAX_SANDBOX_SLOTS).default(DEFAULT_SANDBOX_CONCURRENCY),
  /**
   * The sandbox's directory: run directories and uid lock files; `<tmpdir>/amy-sandboxes-<uid>` when
   * unset. Made 0700 when missing, refused unless private; every worker on a host must share it.
   */
  AMY_SANDBOX_DIR: z.string().min(1).optional(),
  /**
   * How sandbox runs start: `fork` (children of a fork server that imported pandas once; root only),
   * `pool` (pre-started one-shot interpreters) or `off` (a fresh interpreter per run). Unset: `fork`
   * as root, `pool` otherwise; `fork` without root is `pool`.
   */
  AMY_SANDBOX_WARM: z.enum(WARM_MODES).optional(),
  /** bubblewrap's path; `bwrap` on PATH when unset. Read by the worker's sandbox and by /healthz. */
  AMY_BWRAP_PATH: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /**
   * `true`: a caller's W3C `traceparent` is the parent of its request's span, so the trace goes on under the
   * caller's and the caller's sampled flag decides (api/request-tracing.ts, docs/operations.md#traces). Unset: the
   * request starts a trace of its own, linked to the caller's span, and this service's sampler decides, so that no
   * client can have every one of its requests recorded. For callers the operator trusts, e.g. its own backend.
   */
  AMY_OTEL_TRUST_TRACEPARENT: z
    .enum(['', 'true', 'false'])
    .default('')
    .transform((value) => value === 'true'),
  /**
   * `1`: webhooks may go to http URLs and private, loopback and link-local addresses (docs/webhooks.md#safety),
   * for a receiver on a developer's machine; `npm start` and the tests set it. Unset: https and public addresses only.
   */
  AMY_WEBHOOKS_ALLOW_PRIVATE: z
    .enum(['', '0', '1'])
    .default('')
    .transform((value) => value === '1'),
  /** Webhook attempts in flight at once per endpoint, across workers; the others wait for a slot. */
  AMY_WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /**
   * Seconds from a webhook's first failed attempt to its first retry (then doubling, up to an hour). For tests,
   * which cannot wait the default's seconds for every retry; a delivery keeps the value it was started with.
   */
  AMY_WEBHOOK_FIRST_RETRY_SECONDS: z.coerce.number().positive().max(3600).default(5),
  /**
   * The codec server (docs/operations.md#the-codec-server), an operator tool on a listener of its own, never on
   * the public port: its operators (`name:token,…`, tokens of operators' own, never a user's API key) and its
   * port, set together; neither, no codec server.
   */
  AMY_CODEC_OPERATORS: z.string().min(1).optional(),
  AMY_CODEC_PORT: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.coerce.number().int().min(0).max(65535).optional(),
  ),
  /** The codec listener's address: loopback unless an operator chooses otherwise, as the metrics'. */
  AMY_CODEC_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * The codec endpoint as operators' browsers reach it, the Web UI's TEMPORAL_CODEC_ENDPOINT (`…/codec`), when it
   * is not the listener's own address: behind a TLS proxy, its https URL, which makes the sign-in cookie Secure.
   */
  AMY_CODEC_PUBLIC_URL: z
    .string()
    .url()
    .refine((url) => /^https?:$/.test(new URL(url).protocol), 'an http or https URL')
    .optional(),
  /**
   * Browser origins whose pages may call the API (`/v1`, `/openapi.json`): `*` (any), `none`, or a list. Never
   * with credentials: the API takes no cookie, so none is granted.
   */
  AMY_CORS_ALLOWED_ORIGINS: corsAllowedOrigins,
  /**
   * The signing secret of the Terra webhook (docs/terra.md#setting-it-up), as Terra's dashboard shows it; or the
   * path of a file holding it (TERRA_SIGNING_SECRET_FILE), never both. Without either the receiver answers 503.
   */
  TERRA_SIGNING_SECRET: z.string().min(1).optional(),
  TERRA_SIGNING_SECRET_FILE: z.string().min(1).optional(),
  /** How far a Terra signature's timestamp may be from now, in seconds: Terra's SDK's 300 by default. */
  TERRA_SIGNATURE_TOLERANCE_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(DEFAULT_TERRA_SIGNATURE_TOLERANCE_SECONDS),
  /** The largest Terra event body the receiver reads: a large request's chunk is about 10 MB. */
  TERRA_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(256 * 1024 * 1024)
    .default(32 * 1024 * 1024),
  /** Browser origins that may call the codec server (the Temporal Web UI's), comma-separated. */
  AMY_CODEC_ALLOWED_ORIGINS: z.string().default('http://127.0.0.1:8233,http://localhost:8233'),
  /** How long the codec server's audit of decodes is kept, in days; older rows are deleted. */
  AMY_CODEC_AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(365),
  /**
   * The Domain Expert's network tools (docs/operations.md#network-tools): PubMed, and Data Commons with a key. Off by
   * default; with them on, NCBI_EMAIL is required (NCBI's rule: it reaches us before it blocks us).
   */
  AMY_DE_NETWORK_TOOLS: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  /** NCBI E-utilities: where (a local stand-in in development), who we are, and an optional key (10 requests/s instead of 3). */
  NCBI_EUTILS_URL: z.string().url().default(PUBMED_DEFAULT_BASE_URL),
  NCBI_TOOL: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/)
    .default('amy-turn-service'),
  NCBI_EMAIL: z.string().email().optional(),
  NCBI_API_KEY: z.string().min(1).optional(),
  /** Google Data Commons' REST API and its key; without a key the population_statistic tool is not offered. */
  DATA_COMMONS_URL: z.string().url().default(DATA_COMMONS_DEFAULT_BASE_URL),
  DATA_COMMONS_API_KEY: z.string().min(1).optional(),
  /** How long one network tool request may take, in milliseconds. */
  AMY_DE_NETWORK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(8_000),
  /**
   * With the network tools on, which of the Messages API's own server tools the Domain Expert is offered, comma-separated:
   * `web_search`, `web_fetch` (beta). None by default: a model behind ANTHROPIC_BASE_URL may not offer them.
   */
  AMY_DE_WEB_TOOLS: z
    .string()
    .default('')
    .transform((value) => commaList(value))
    .pipe(z.array(z.enum(['web_search', 'web_fetch'])).transform((tools) => [...new Set(tools)])),
  /** The domains web search and fetch may use, comma-separated (e.g. `nih.gov,who.int,cdc.gov`); empty: any domain. */
  AMY_DE_WEB_DOMAINS: z
    .string()
    .default('')
    .transform((value) => commaList(value).map((domain) => domain.toLowerCase()))
    .pipe(z.array(z.string().regex(/^(?!-)[a-z0-9.-]+\.[a-z]{2,}(\/\S*)?$/, 'a domain such as nih.gov'))),
});

export type Config = z.infer<typeof configSchema>;

const checkedConfigSchema = configSchema
  .refine((c) => c.AMY_HEADERS_TIMEOUT_MS <= c.AMY_REQUEST_TIMEOUT_MS, {
    message: 'AMY_HEADERS_TIMEOUT_MS must not exceed AMY_REQUEST_TIMEOUT_MS (the headers are part of the request)',
    path: ['AMY_HEADERS_TIMEOUT_MS'],
  })
  .refine((c) => c.TERRA_SIGNING_SECRET === undefined || c.TERRA_SIGNING_SECRET_FILE === undefined, {
    message: 'set TERRA_SIGNING_SECRET or TERRA_SIGNING_SECRET_FILE, not both',
    path: ['TERRA_SIGNING_SECRET_FILE'],
  })
  .refine((c) => !c.AMY_DE_NETWORK_TOOLS || c.NCBI_EMAIL !== undefined, {
    message: 'AMY_DE_NETWORK_TOOLS=true needs NCBI_EMAIL: NCBI asks every E-utilities client for a contact address',
    path: ['NCBI_EMAIL'],
  })
  .refine((c) => (c.AMY_DEPLOYMENT_NAME === undefined) === (c.AMY_BUILD_ID === undefined), {
    message: 'set AMY_DEPLOYMENT_NAME and AMY_BUILD_ID together (a versioned worker), or neither (an unversioned one)',
    path: ['AMY_BUILD_ID'],
  });

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The environment parsed by `schema`, or a ConfigError that lists every problem. */
function parseEnvironment<T>(schema: z.ZodType<T>, env: NodeJS.ProcessEnv): T {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new ConfigError(`Invalid configuration:\n${problems}`);
  }
  return parsed.data;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return parseEnvironment(checkedConfigSchema, env);
}

/**
 * The API's codec server, when its operators and its port are both set; null when neither is. One without the
 * other is refused, by the API alone: the worker has no codec server, and a setting it inherits is not its own.
 */
export function codecServerConfig(
  config: Pick<Config, 'AMY_CODEC_OPERATORS' | 'AMY_CODEC_PORT'>,
): { operators: string; port: number } | null {
  const { AMY_CODEC_OPERATORS: operators, AMY_CODEC_PORT: port } = config;
  if (operators === undefined && port === undefined) return null;
  if (operators === undefined || port === undefined) {
    throw new ConfigError(
      'Invalid configuration:\n  AMY_CODEC_PORT: set AMY_CODEC_OPERATORS and AMY_CODEC_PORT together ' +
        '(the codec server, on a listener of its own), or neither',
    );
  }
  return { operators, port };
}

/** The cost caps' defaults alone, for a tool that needs no other setting (`npm run user:caps`). */
export function loadCostCapConfig(
  env: NodeJS.ProcessEnv = process.env,
): Pick<Config, 'AMY_USER_DAILY_CAP_USD' | 'AMY_USER_MONTHLY_CAP_USD'> {
  return parseEnvironment(configSchema.pick({ AMY_USER_DAILY_CAP_USD: true, AMY_USER_MONTHLY_CAP_USD: true }), env);
}

/** The drain's grace alone, for `npm start`, which stops its roles and must not kill one mid-drain. */
export function loadShutdownConfig(env: NodeJS.ProcessEnv = process.env): Pick<Config, 'AMY_SHUTDOWN_GRACE_SECONDS'> {
  return parseEnvironment(configSchema.pick({ AMY_SHUTDOWN_GRACE_SECONDS: true }), env);
}

/** Where Temporal is and the deployment's name, for the release commands (`npm run deploy:*`). */
export function loadDeploymentConfig(
  env: NodeJS.ProcessEnv = process.env,
): Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE' | 'AMY_DEPLOYMENT_NAME'> {
  return parseEnvironment(
    configSchema.pick({ TEMPORAL_ADDRESS: true, TEMPORAL_NAMESPACE: true, AMY_DEPLOYMENT_NAME: true }),
    env,
  );
}

/**
 * The Terra signing secret from the environment or its file, null when neither is set. A file that cannot be read
 * or is empty is a ConfigError naming the file, never its content.
 */
export function terraSigningSecret(
  config: Pick<Config, 'TERRA_SIGNING_SECRET' | 'TERRA_SIGNING_SECRET_FILE'>,
): string | null {
  if (config.TERRA_SIGNING_SECRET !== undefined) return config.TERRA_SIGNING_SECRET;
  const path = config.TERRA_SIGNING_SECRET_FILE;
  if (path === undefined) return null;
  let secret: string;
  try {
    secret = readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new ConfigError(
      `Invalid configuration:\n  TERRA_SIGNING_SECRET_FILE: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if (!secret) throw new ConfigError(`Invalid configuration:\n  TERRA_SIGNING_SECRET_FILE: ${path} is empty`);
  return secret;
}
