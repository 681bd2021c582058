/**
 * `npm start`: the whole service on embedded defaults. Uses DATABASE_URL / TEMPORAL_ADDRESS /
 * ANTHROPIC_API_KEY when set; otherwise starts a project-owned Postgres and a Temporal dev server
 * (SQLite, Web UI) under .data/, and the scripted model. Then migrates, prepares the demo user,
 * starts the worker and the API as child processes, prints how to use it and writes .data/stack.json.
 * SIGINT/SIGTERM stop everything it started.
 *
 * What it says and what its roles log comes out in one format (platform/logger.ts): JSON lines, or
 * readable lines when its stdout is a terminal. The roles write JSON to their pipes; each line is
 * written again here in this process's format. Only the banner, for people, is plain text.
 */
import { developmentCodecOperator, developmentMasterKey } from './dev-keys';
import fs from 'node:fs';
import path from 'node:path';
import { hasDailySummaries } from '../../platform/health-data/store';
import { seedDemoHealthData } from '../synthetic-data/demo-user';
import { loadShutdownConfig } from '../../platform/config';
import { createLogger, createLogRelay } from '../../platform/logger';
import { HANDBACK_MS } from '../../worker/deploy-options';
import { createPgPool } from '../../platform/pg-pool';
import { ensureUser, findUserIdByApiKey, issueApiKey } from '../../platform/users';
import { startScriptedModelServer } from '../scripted-model/server';
import { applyMigrations } from '../../scripts/migrate';
import { httpOk, launch, lineIncludes, stopEach, type LaunchedProcess, type Readiness } from './child-process';
import { startLocalServices } from './local-services';
import { preferPort } from './ports';
import { reportSandbox } from './sandbox-report';

const root = path.resolve(__dirname, '..', '..');
const dataDir = path.join(root, '.data');
const stackFile = path.join(dataDir, 'stack.json');
const DEMO_USER = 'demo';
/**
 * How long Temporal keeps a closed turn's history: longer than the SSE replay window (an hour) and than an
 * operator needs to look at a failed turn and retry it (`turn:retry` resets the closed workflow), a week.
 */
const HISTORY_RETENTION = '168h';

const log = createLogger('stack');
const say = (msg: string) => log.info(msg);
const relay = createLogRelay();

function readPreviousStack(): { demo_api_key?: string } {
  try {
    return JSON.parse(fs.readFileSync(stackFile, 'utf8'));
  } catch {
    return {};
  }
}

async function run() {
  fs.mkdirSync(dataDir, { recursive: true });
  const stoppers: Array<() => Promise<void>> = [];
  const children = new Set<LaunchedProcess>();
  let stopping = false;
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping…');
    await stopEach(children);
    for (const stop of stoppers.reverse())
      await stop().catch((err: unknown) => log.error('could not stop a local service', { error: err }));
    say('stopped');
    process.exit(code);
  };
  process.once('SIGINT', () => void stopAll(0));
  process.once('SIGTERM', () => void stopAll(0));

  try {
    // Before anything else, so the warning is not lost above the services' start-up output.
    const sandbox = await reportSandbox(log);
    // Chosen first: the Web UI is told where the codec server is when the Temporal dev server starts. The codec
    // server is the API's, on a listener of its own (docs/operations.md#the-codec-server).
    const apiPort = process.env.PORT ? Number(process.env.PORT) : await preferPort(3000);
    const codecPort = process.env.AMY_CODEC_PORT ? Number(process.env.AMY_CODEC_PORT) : await preferPort(8234);
    const codecEndpoint = process.env.AMY_CODEC_PUBLIC_URL ?? `http://127.0.0.1:${codecPort}/codec`;
    const services = await startLocalServices({
      postgres: { dataDir: path.join(dataDir, 'postgres'), preferredPort: 54329 },
      temporal: {
        dbFile: path.join(dataDir, 'temporal', 'temporal.db'),
        preferredPort: 7233,
        preferredUiPort: 8233,
        logFile: path.join(dataDir, 'temporal', 'server.log'),
        historyRetention: HISTORY_RETENTION,
        uiCodecEndpoint: codecEndpoint,
      },
      log: say,
    });
    stoppers.push(() => services.stop());
    const { databaseUrl, temporalAddress, temporalUiUrl: temporalUi } = services;
    say('applying migrations');
    applyMigrations(databaseUrl);

    let anthropicBaseUrl = process.env.ANTHROPIC_BASE_URL;
    if (!process.env.ANTHROPIC_API_KEY && !anthropicBaseUrl) {
      const scripted = await startScriptedModelServer({ port: await preferPort(4100) });
      stoppers.push(() => scripted.close());
      anthropicBaseUrl = scripted.url;
      say(`no ANTHROPIC_API_KEY: using the scripted model at ${scripted.url}`);
    }

    const pool = createPgPool(databaseUrl, 2);
    const demo = await ensureUser(pool, DEMO_USER);
    if (!(await hasDailySummaries(pool, demo.id))) {
      say('generating synthetic health data for the demo user');
      await seedDemoHealthData(pool, demo.id);
    }
    const previousKey = readPreviousStack().demo_api_key;
    const demoKey =
      previousKey && (await findUserIdByApiKey(pool, previousKey)) === demo.id
        ? previousKey
        : await issueApiKey(pool, demo.id);
    await pool.end();

    const codec = developmentCodecOperator(dataDir);
    const codecEnv = { ...codec.env, AMY_CODEC_PORT: String(codecPort) };
    const env = {
      ...developmentMasterKey(dataDir, say),
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      PORT: String(apiPort),
      ...(anthropicBaseUrl ? { ANTHROPIC_BASE_URL: anthropicBaseUrl } : {}),
      // A developer's webhook receiver runs on this machine (docs/webhooks.md#safety); set to 0 to try the refusal.
      AMY_WEBHOOKS_ALLOW_PRIVATE: process.env.AMY_WEBHOOKS_ALLOW_PRIVATE ?? '1',
    };
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    // AMY_METRICS_PORT asks for metrics (docs/operations.md#metrics): one port per process, so the API gets
    // it and the worker the next one, where they would otherwise both try the same.
    const metricsPort = process.env.AMY_METRICS_PORT ? Number(process.env.AMY_METRICS_PORT) : undefined;
    const metricsEnv = (role: 'worker' | 'api') =>
      metricsPort === undefined ? {} : { AMY_METRICS_PORT: String(role === 'api' ? metricsPort : metricsPort + 1) };
    // Their logs are relayed in our format; the worker is ready once it polls, the API once it is healthy.
    // Stopped, each drains (docs/operations.md#deploying): SIGKILL only once its drain has overrun its bound.
    const drainBoundMs = loadShutdownConfig().AMY_SHUTDOWN_GRACE_SECONDS * 1000 + HANDBACK_MS + 5_000;
    const launchRole = (role: 'worker' | 'api', ready: Readiness<true>, timeoutMs?: number) =>
      launch({
        name: `the ${role}`,
        entry: `${role}/main.ts`,
        env: { ...env, ...metricsEnv(role), ...(role === 'api' ? codecEnv : {}) },
        onLine: (line, from) => relay(role, line, from),
        ready,
        timeoutMs,
        graceMs: drainBoundMs,
        track: children,
      });
    const roles = await Promise.all([
      launchRole('worker', lineIncludes('worker polling')),
      launchRole('api', httpOk(`${apiUrl}/healthz`, 250), 60_000),
    ]);
    for (const role of roles) {
      void role.exited.then(({ code, signal }) => {
        if (stopping) return;
        log.error(`${role.name} exited; stopping everything`, { exit: signal ?? code });
        void stopAll(1);
      });
    }

    const curl =
      `curl -s -X POST ${apiUrl}/v1/turns -H "Authorization: Bearer ${demoKey}" -H "Content-Type: application/json" ` +
      `-d '{"messages":[{"role":"user","content":"thanks!"}]}' | grep -o 'turn_[0-9A-Z]*' | head -1 | ` +
      `xargs -I{} curl -sN -H "Authorization: Bearer ${demoKey}" -H "Accept: text/event-stream" ${apiUrl}/v1/turns/{}/events`;
    const consoleUrl = `${apiUrl}/console`;
    const stack = {
      api_url: apiUrl,
      console_url: consoleUrl,
      temporal_ui_url: temporalUi,
      codec_url: codecEndpoint,
      temporal_address: temporalAddress,
      postgres_url: databaseUrl,
      anthropic_base_url: anthropicBaseUrl ?? null,
      demo_user: DEMO_USER,
      demo_api_key: demoKey,
      stream_turn_curl: curl,
    };
    // It holds the demo key: readable by this user alone (amy trusts it only if no one else can write it).
    fs.writeFileSync(stackFile, JSON.stringify(stack, null, 2) + '\n', { mode: 0o600 });
    fs.chmodSync(stackFile, 0o600);
    console.log(
      [
        '',
        '  Amy turn service is running.',
        `  API:              ${apiUrl}   (OpenAPI at ${apiUrl}/openapi.json)`,
        `  Console:          ${consoleUrl}   (sign in with the demo API key)`,
        `  Temporal Web UI:  ${temporalUi ?? '(external Temporal: see your cluster)'}`,
        `  Codec server:     ${codecEndpoint}   (for the Web UI and temporal --codec-endpoint; operators only)`,
        `  Codec sign-in:    ${codecEndpoint}/login   (with ${codec.tokenSource})`,
        `  Demo API key:     ${demoKey}`,
        ...(metricsPort === undefined
          ? []
          : [
              `  Metrics:          http://127.0.0.1:${metricsPort}/metrics (API), :${metricsPort + 1}/metrics (worker)`,
            ]),
        `  Sandbox:          ${sandbox}`,
        '',
        '  Stream a turn:',
        `  ${curl}`,
        '',
        `  (also in ${path.relative(process.cwd(), stackFile)}; Ctrl-C stops everything)`,
        '',
      ].join('\n'),
    );
  } catch (err) {
    log.error('start-up failed', { error: err instanceof Error ? err.message : String(err) });
    await stopAll(1);
  }
}

run().catch((err: unknown) => {
  log.error('npm start failed', { error: err });
  process.exit(1);
});
