/**
 * `npm start`: the whole service on embedded defaults. Uses DATABASE_URL / TEMPORAL_ADDRESS /
 * ANTHROPIC_API_KEY when set; otherwise starts a project-owned Postgres and a Temporal dev server
 * (SQLite, Web UI) under .data/, and the scripted model. Then migrates, prepares the demo user,
 * starts the worker and the API as child processes, prints how to use it and writes .data/stack.json.
 * SIGINT/SIGTERM stop everything it started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createDb } from '../platform/db';
import { seedDemoHealthData } from '../platform/health-data/store';
import { ensureUser, findUserIdByApiKey, issueApiKey } from '../platform/users';
import { startScriptedModelServer } from '../scripted-model/server';
import { freePort, startLocalPostgres } from './local-postgres';
import { startLocalTemporal } from './local-temporal';
import { applyMigrations } from './migrate';

const root = path.resolve(__dirname, '..');
const dataDir = path.join(root, '.data');
const stackFile = path.join(dataDir, 'stack.json');
const DEMO_USER = 'demo';

const say = (msg: string) => console.log(`[amy] ${msg}`);

/** The conventional port when it is free (stable URLs across restarts), any free port otherwise. */
async function preferPort(port: number): Promise<number> {
  const free = await new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
  return free ? port : freePort();
}

function readPreviousStack(): { demo_api_key?: string } {
  try {
    return JSON.parse(fs.readFileSync(stackFile, 'utf8'));
  } catch {
    return {};
  }
}

async function waitForHealthy(url: string, child: ChildProcess, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error('the API exited during start-up');
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the API did not become healthy within ${timeoutMs} ms`);
}

async function run() {
  fs.mkdirSync(dataDir, { recursive: true });
  const stoppers: Array<() => Promise<void>> = [];
  const children: ChildProcess[] = [];
  let stopping = false;
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping…');
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
          }),
      ),
    );
    for (const stop of stoppers.reverse()) await stop().catch((err) => console.error(err));
    say('stopped');
    process.exit(code);
  };
  process.once('SIGINT', () => void stopAll(0));
  process.once('SIGTERM', () => void stopAll(0));

  try {
    let databaseUrl = process.env.DATABASE_URL;
    if (!databaseUrl) {
      say('starting Postgres under .data/postgres');
      const pg = await startLocalPostgres({
        dataDir: path.join(dataDir, 'postgres'),
        port: await preferPort(54329),
        log: say,
      });
      stoppers.push(() => pg.stop());
      databaseUrl = pg.url;
    }
    say('applying migrations');
    applyMigrations(databaseUrl);

    let temporalAddress = process.env.TEMPORAL_ADDRESS;
    let temporalUi: string | null = process.env.TEMPORAL_UI_URL ?? null;
    if (!temporalAddress) {
      say('starting the Temporal dev server (SQLite under .data/temporal)');
      const temporal = await startLocalTemporal({
        dbFile: path.join(dataDir, 'temporal', 'temporal.db'),
        port: await preferPort(7233),
        uiPort: await preferPort(8233),
        logFile: path.join(dataDir, 'temporal', 'server.log'),
      });
      stoppers.push(() => temporal.stop());
      temporalAddress = temporal.address;
      temporalUi = temporal.uiUrl;
    }

    let anthropicBaseUrl = process.env.ANTHROPIC_BASE_URL;
    if (!process.env.ANTHROPIC_API_KEY && !anthropicBaseUrl) {
      const scripted = await startScriptedModelServer({ port: await preferPort(4100) });
      stoppers.push(() => scripted.close());
      anthropicBaseUrl = scripted.url;
      say(`no ANTHROPIC_API_KEY: using the scripted model at ${scripted.url}`);
    }

    const db = createDb(databaseUrl);
    const demo = await ensureUser(db, DEMO_USER);
    if ((await db.dailySummary.count({ where: { userId: demo.id } })) === 0) {
      say('generating synthetic health data for the demo user');
      await seedDemoHealthData(db, demo.id);
    }
    const previousKey = readPreviousStack().demo_api_key;
    const demoKey =
      previousKey && (await findUserIdByApiKey(db, previousKey)) === demo.id
        ? previousKey
        : await issueApiKey(db, demo.id);
    await db.$disconnect();

    const apiPort = process.env.PORT ? Number(process.env.PORT) : await preferPort(3000);
    const env = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      PORT: String(apiPort),
      ...(anthropicBaseUrl ? { ANTHROPIC_BASE_URL: anthropicBaseUrl } : {}),
    };
    const spawnRole = (role: 'worker' | 'api') => {
      // `node --import tsx` keeps each role a single process (the tsx CLI would add a wrapper process
      // that a hard kill leaves orphaned). stdout is relayed so we can tell when the worker polls.
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, role, 'main.ts')], {
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      child.stdout?.pipe(process.stdout);
      child.on('exit', (code, signal) => {
        if (!stopping) {
          console.error(`[amy] the ${role} exited (${signal ?? code}); stopping everything`);
          void stopAll(1);
        }
      });
      children.push(child);
      return child;
    };
    const worker = spawnRole('worker');
    const workerPolling = new Promise<void>((resolve) => {
      worker.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('worker polling')) resolve();
      });
    });
    const api = spawnRole('api');
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    await waitForHealthy(apiUrl, api);
    await workerPolling;

    const curl =
      `curl -s -X POST ${apiUrl}/v1/turns -H "Authorization: Bearer ${demoKey}" -H "Content-Type: application/json" ` +
      `-d '{"messages":[{"role":"user","content":"thanks!"}]}' | grep -o 'turn_[0-9A-Z]*' | head -1 | ` +
      `xargs -I{} curl -sN -H "Authorization: Bearer ${demoKey}" -H "Accept: text/event-stream" ${apiUrl}/v1/turns/{}/events`;
    const consoleUrl = `${apiUrl}/console`;
    const stack = {
      api_url: apiUrl,
      console_url: consoleUrl,
      temporal_ui_url: temporalUi,
      temporal_address: temporalAddress,
      postgres_url: databaseUrl,
      anthropic_base_url: anthropicBaseUrl ?? null,
      demo_user: DEMO_USER,
      demo_api_key: demoKey,
      stream_turn_curl: curl,
    };
    fs.writeFileSync(stackFile, JSON.stringify(stack, null, 2) + '\n');
    console.log(
      [
        '',
        '  Amy turn service is running.',
        `  API:              ${apiUrl}   (OpenAPI at ${apiUrl}/openapi.json)`,
        `  Console:          ${consoleUrl}   (sign in with the demo API key)`,
        `  Temporal Web UI:  ${temporalUi ?? '(external Temporal: see your cluster)'}`,
        `  Demo API key:     ${demoKey}`,
        '',
        '  Stream a turn:',
        `  ${curl}`,
        '',
        `  (also in ${path.relative(process.cwd(), stackFile)}; Ctrl-C stops everything)`,
        '',
      ].join('\n'),
    );
  } catch (err) {
    console.error('[amy] start-up failed:', err instanceof Error ? err.message : err);
    await stopAll(1);
  }
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
