/**
 * `amy` end to end: the built CLI run as a child process (cli/bin/amy.mjs, as `npx amy` runs it)
 * against the real service, configured the way users configure it (AMY_* variables, or a
 * .data/stack.json). Checks the NDJSON stream against the stored event log, every exit code with a
 * real cause (a model fault, a cancellation from another process, Ctrl-C, a port nothing listens on,
 * a bad key), resuming with --after, traces, memory and reset, and the live view through a real
 * pseudo-terminal (util-linux `script`).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Amy, type TurnStreamEvent } from '@amy/sdk';
import { createEventLog } from '../../platform/event-log';
import { AMY_BIN, ensureCliBuilt, REPO_ROOT } from '../support/workspace-build';
import { runAmy, startAmy } from '../support/cli/run-amy';
import { CLEAR_SCREEN, COLOUR_CODE, screenAfter } from '../support/cli/virtual-terminal';
import { startDemoService, type DemoService } from '../support/service';

jest.setTimeout(90_000);

// An inference (a planted association): every gate and the Critic have something to say about it.
const DATA_QUESTION = 'Are my active zone minutes related to my deep sleep minutes?';
/** A fallback turn: one streamed model reply (step `fallback_reply`), the quickest turn there is. */
const SMALL_TALK = 'thanks!';

let demo: DemoService;
let env: Record<string, string>;
let amy: Amy;

beforeAll(async () => {
  ensureCliBuilt();
  demo = await startDemoService();
  env = { AMY_API_KEY: demo.user.apiKey, AMY_BASE_URL: demo.svc.url };
  amy = new Amy({ apiKey: demo.user.apiKey, baseUrl: demo.svc.url });
}, 120_000);
afterAll(() => demo?.close());
afterEach(() => demo.svc.scripted.faults.clear());

const ndjson = (stdout: string) =>
  stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as TurnStreamEvent & Record<string, unknown>);

/** The stored log in the SDK's shape: `{ id, type, ...data }`. */
async function storedEvents(turnId: string) {
  const log = await createEventLog(demo.pool).readAfter(turnId, 0, 10_000);
  return log.map((e) => ({ ...e.data, id: e.id, type: e.type }));
}

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'amy-cli-'));

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A `.data/stack.json` in a fresh directory (file 0644 and directory 0755 unless `modes` says otherwise); returns a directory below it. */
function plantStackFile(stack: object, modes: { file?: number; dir?: number } = {}): string {
  const root = tempDir();
  const dir = path.join(root, '.data');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'stack.json'), JSON.stringify(stack));
  fs.chmodSync(path.join(dir, 'stack.json'), modes.file ?? 0o644);
  fs.chmodSync(dir, modes.dir ?? 0o755);
  const nested = path.join(root, 'src');
  fs.mkdirSync(nested);
  return nested;
}

/** A port that counts the connections made to it: a key sent there would have to connect first. */
async function recordingListener(): Promise<{ url: string; connections(): number; close(): Promise<void> }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Holds the fallback reply back long enough for the test to act on a running turn. */
const holdSmallTalk = () =>
  demo.svc.scripted.faults.inject({ kind: 'slow', step: 'fallback_reply', times: 1, delay_ms: 60_000 });

describe('a data question, asked and watched', () => {
  let turnId: string;
  let events: Array<Record<string, unknown>>;

  test('ask --json: every event once as NDJSON (ids 1..N, the stored log exactly), exit 0', async () => {
    const run = await runAmy(['ask', DATA_QUESTION, '--json'], { env });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    events = ndjson(run.stdout);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)!.type).toBe('turn.completed');
    turnId = events[0].turn_id as string;
    expect(events).toEqual(await storedEvents(turnId));
  });

  test('watch --after N resumes with event N + 1 and runs to the end', async () => {
    const after = Math.floor(events.length / 2);
    const run = await runAmy(['watch', turnId, '--after', String(after), '--json'], { env });
    expect(run.code).toBe(0);
    const resumed = ndjson(run.stdout);
    expect(resumed[0].id).toBe(after + 1);
    expect(resumed).toEqual(events.slice(after));
  });

  test('watch, piped: plain text with each finished block once and no escape sequence', async () => {
    const run = await runAmy(['watch', turnId], { env });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('\x1b');
    const { result } = await amy.turns.get(turnId);
    expect(run.stdout.split(result!.answer.trim())).toHaveLength(2);
    expect(run.stdout.split('\n').filter((line) => line === 'Answer')).toHaveLength(1);
    expect(run.stdout).toMatch(/^ {2}ds-\d+ +[✓–✗·]( [✓–✗·]){7} +critic (accept|downgrade|reject) /m);
    expect(run.stdout).toMatch(/^Cost \$\d+\.\d{4} · /m);
  });

  test('trace -o writes every event once, one line each, and says where', async () => {
    const dir = tempDir();
    const run = await runAmy(['trace', turnId, '-o', 'trace.jsonl'], { env, cwd: dir });
    expect(run.code).toBe(0);
    const file = path.join(dir, 'trace.jsonl');
    expect(run.stdout).toBe(`Wrote ${events.length} events (ids 1–${events.length}) of ${turnId} to ${file}\n`);
    expect(ndjson(fs.readFileSync(file, 'utf8'))).toEqual(events);
    // Without -o: <turn_id>.jsonl in the current directory.
    expect((await runAmy(['trace', turnId], { env, cwd: dir })).code).toBe(0);
    expect(ndjson(fs.readFileSync(path.join(dir, `${turnId}.jsonl`), 'utf8'))).toEqual(events);
  });

  test('memory list --all includes the tested hypotheses the turn wrote; reset --yes deletes them all', async () => {
    const all = ndjson((await runAmy(['memory', 'list', '--all', '--json'], { env })).stdout);
    expect(all.map((m) => m.category)).toContain('tested_hypothesis');
    const firstPage = await runAmy(['memory', 'list', '--json'], { env });
    expect(firstPage.stdout.trim() === '' ? [] : ndjson(firstPage.stdout).map((m) => m.category)).not.toContain(
      'tested_hypothesis',
    );
    const reset = await runAmy(['reset', '--yes'], { env });
    expect(reset.code).toBe(0);
    expect(reset.stdout).toMatch(new RegExp(`^Deleted ${all.length} memory entr(y|ies) \\(.*tested_hypothesis`));
    expect((await amy.memory.list({ include: 'tested_hypothesis' })).data).toEqual([]);
  });

  test('the stream gives up against a port nothing listens on: exit 4 and the command that resumes', async () => {
    const unreachable = { ...env, AMY_BASE_URL: `http://127.0.0.1:${await closedPort()}` };
    const knobs = { AMY_MAX_RETRIES: '2', AMY_RETRY_DELAY_MS: '10' };
    const watch = await runAmy(['watch', turnId], { env: { ...unreachable, ...knobs } });
    expect(watch.code).toBe(4);
    expect(watch.stderr).toContain(
      `error: Lost the event stream of ${turnId} after 3 failed connections (ECONNREFUSED). ` +
        `Resume with: amy watch ${turnId} --after 0`,
    );
    const ask = await runAmy(['ask', DATA_QUESTION], { env: { ...unreachable, ...knobs } });
    expect(ask.code).toBe(4);
    expect(ask.stderr).toMatch(/^error: Could not reach http:\/\/127\.0\.0\.1:\d+\/v1\/turns \(ECONNREFUSED\)$/m);
  });
});

describe('how a turn ends is the exit code', () => {
  test('a turn that fails (the model answers 500 past every retry): exit 1, the error with its request id', async () => {
    demo.svc.scripted.faults.inject({ kind: 'server_error', times: -1 });
    const run = await runAmy(['ask', SMALL_TALK], { env });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^✗ The turn failed: .+ \(upstream_unavailable, request req_\w+\)$/m);
  });

  test('cancelled from another process with `amy turns cancel`: the watcher exits 3', async () => {
    holdSmallTalk();
    const asking = startAmy(['ask', SMALL_TALK], { env });
    const [, turnId] = await asking.waitFor(/● (turn_\w+) started/);
    const cancel = await runAmy(['turns', 'cancel', turnId], { env });
    expect(cancel).toMatchObject({
      code: 0,
      stdout: `Cancelling ${turnId}: it will end failed with code cancelled.\n`,
    });
    const run = await asking.exited;
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/^✗ The turn was cancelled: .+ \(cancelled/m);
  });

  test('Ctrl-C twice: the first detaches and says how to resume, the second cancels; the NDJSON has no gap', async () => {
    holdSmallTalk();
    const asking = startAmy(['ask', SMALL_TALK, '--json'], { env });
    const [, turnId] = await asking.waitFor(/"turn_id":"(turn_\w+)"/);
    asking.child.kill('SIGINT');
    await asking.waitFor(/amy watch turn_\w+ --after \d+\n.*within 3 s to cancel/, 'stderr');
    asking.child.kill('SIGINT');
    const run = await asking.exited;
    expect(run.code).toBe(3);
    const events = ndjson(run.stdout);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)).toMatchObject({ type: 'turn.failed', error: { code: 'cancelled' } });
    expect(events).toEqual(await storedEvents(turnId));
  });

  test('Ctrl-C once: detached, exit 130 after the window, the turn runs on, and the printed command resumes it', async () => {
    holdSmallTalk();
    const asking = startAmy(['ask', SMALL_TALK], { env });
    const [, turnId] = await asking.waitFor(/● (turn_\w+) started/);
    asking.child.kill('SIGINT');
    const [resume, , after] = await asking.waitFor(/amy watch (turn_\w+) --after (\d+)/, 'stderr');
    expect(resume).toBe(`amy watch ${turnId} --after ${after}`);
    const detachedAt = Date.now();
    const run = await asking.exited;
    expect(run.code).toBe(130);
    expect(Date.now() - detachedAt).toBeGreaterThan(2_000);
    expect((await amy.turns.get(turnId)).status).toBe('running');

    await amy.turns.cancel(turnId);
    const watch = await runAmy(resume.split(' ').slice(1).concat('--json'), { env });
    expect(watch.code).toBe(3);
    const rest = ndjson(watch.stdout);
    expect(rest[0].id).toBe(Number(after) + 1);
    expect(rest.at(-1)).toMatchObject({ type: 'turn.failed', error: { code: 'cancelled' } });
  });
});

describe('memory', () => {
  test('`amy memory` alone lists memory, as `amy memory list` does, with the same options', async () => {
    const user = await demo.svc.createUser();
    const mine = { AMY_API_KEY: user.apiKey, AMY_BASE_URL: demo.svc.url };
    expect((await runAmy(['memory', 'add', 'goal', 'Sleep seven hours'], { env: mine })).code).toBe(0);
    const alone = await runAmy(['memory'], { env: mine });
    expect(alone.code).toBe(0);
    expect(alone.stdout).toMatch(/^mem_\w+ +goal +\d{4}-\d\d-\d\d {2}Sleep seven hours\n$/);
    expect(alone.stdout).toBe((await runAmy(['memory', 'list'], { env: mine })).stdout);
    const json = await runAmy(['memory', '--json', '--category', 'goal'], { env: mine });
    expect(ndjson(json.stdout)).toEqual([expect.objectContaining({ category: 'goal', text: 'Sleep seven hours' })]);
    expect((await runAmy(['memory', '--all'], { env: mine })).stdout).toBe(alone.stdout);
    // The group's help still lists its commands; an unknown subcommand is still an error.
    const help = await runAmy(['memory', '--help'], { env: {} });
    expect(help.stdout).toMatch(/^amy memory list /m);
    expect(help.stdout).toMatch(/^amy memory rm /m);
    const unknown = await runAmy(['memory', 'show'], { env: mine });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^error: amy memory takes one of: list, add, rm/);
  });

  test('`amy help` and `amy reset --help` say what reset deletes and what it keeps, as the docs do', async () => {
    const help = await runAmy(['help'], { env: {} });
    const line = /^ {2}reset +(.+)$/m.exec(help.stdout)?.[1] ?? '';
    expect(line).toMatch(/deletes? all your memory entries/);
    expect(line).toMatch(/tested hypotheses included/);
    expect(line).toMatch(/turns, health data and API keys are kept/);
    const own = await runAmy(['reset', '--help'], { env: {} });
    for (const fact of [
      /every memory entry of the key's user/,
      /tested_hypothesis entries/,
      /turns.*health data.*profile\s+and\s+API keys are not touched/s,
      /written after the listing.*are kept/s,
    ]) {
      expect(own.stdout).toMatch(fact);
    }
    const docs = fs.readFileSync(path.join(REPO_ROOT, 'docs/cli-and-console.md'), 'utf8');
    expect(docs).toMatch(/`amy memory`.*lists/);
    expect(docs).toMatch(/`amy reset \[--yes\]` +\| deletes all your memory entries, tested hypotheses included/);
  });

  test('add, list and rm; reset refuses without a terminal or --yes, and deletes everything with it', async () => {
    const user = await demo.svc.createUser();
    const mine = { AMY_API_KEY: user.apiKey, AMY_BASE_URL: demo.svc.url };
    const goal = await runAmy(['memory', 'add', 'goal', 'Run a 10k in under 50 minutes'], { env: mine });
    expect(goal.code).toBe(0);
    const [, goalId] = /^Added (mem_\w+) +goal +\d{4}-\d\d-\d\d {2}Run a 10k in under 50 minutes$/m.exec(goal.stdout)!;
    expect((await runAmy(['memory', 'add', 'preference', 'Vegetarian. No fish.'], { env: mine })).code).toBe(0);
    const bogus = await runAmy(['memory', 'add', 'mood', 'Cheerful'], { env: mine });
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toMatch(/^error: Unknown category "mood"/);
    // A credential is refused by the API: the CLI says why, with its code, and never prints the secret.
    const secret = await runAmy(['memory', 'add', 'history', 'My Garmin password is Tr0ub4dor&3'], { env: mine });
    expect(secret.code).toBe(2);
    expect(secret.stderr).toMatch(/^error: text: looks like a password\. .+ \(secret_detected, request req_\w+\)$/m);
    expect(secret.stdout + secret.stderr).not.toContain('Tr0ub4dor');

    const listed = await runAmy(['memory', 'list'], { env: mine });
    expect(listed.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^mem_\w+ +preference +\S+ +Vegetarian\. No fish\.$/),
      expect.stringMatching(new RegExp(`^${goalId} +goal +`)),
    ]);
    expect(ndjson((await runAmy(['memory', 'list', '--category', 'goal', '--json'], { env: mine })).stdout)).toEqual([
      expect.objectContaining({ id: goalId, category: 'goal', source_turn_id: null }),
    ]);

    expect(await runAmy(['memory', 'rm', goalId], { env: mine })).toMatchObject({
      code: 0,
      stdout: `Deleted ${goalId}.\n`,
    });
    const again = await runAmy(['memory', 'rm', goalId], { env: mine });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^error: .+ \(not_found, request req_\w+\)$/m);

    const refused = await runAmy(['reset'], { env: mine });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    const reset = await runAmy(['reset', '--yes'], { env: mine });
    expect(reset).toMatchObject({ code: 0, stdout: 'Deleted 1 memory entry (1 preference).\n' });
    const userAmy = new Amy({ apiKey: user.apiKey, baseUrl: demo.svc.url });
    expect((await userAmy.memory.list({ include: 'tested_hypothesis' })).data).toEqual([]);
  });
});

describe('configuration', () => {
  test('with AMY_* unset, the .data/stack.json of a parent directory', async () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, '.data'));
    fs.writeFileSync(
      path.join(root, '.data/stack.json'),
      JSON.stringify({ api_url: demo.svc.url, demo_api_key: demo.user.apiKey, demo_user: 'demo' }),
    );
    const nested = path.join(root, 'a/b');
    fs.mkdirSync(nested, { recursive: true });
    const run = await runAmy(['memory', 'add', 'history', 'Marathon runner for 8 years.'], { env: {}, cwd: nested });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Added mem_\w+ +history /);
  });

  test('AMY_API_KEY with a planted stack.json and no AMY_BASE_URL: exit 2 asking for AMY_BASE_URL, nothing sent to the file’s URL', async () => {
    const listener = await recordingListener();
    try {
      const cwd = plantStackFile({ api_url: listener.url, demo_api_key: 'amy_planted' });
      const run = await runAmy(['memory', 'list'], { env: { AMY_API_KEY: demo.user.apiKey }, cwd });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^error: AMY_API_KEY is set but AMY_BASE_URL is not: set AMY_BASE_URL/);
      expect(run.stderr).not.toContain(demo.user.apiKey);
      expect(listener.connections()).toBe(0);
    } finally {
      await listener.close();
    }
  });

  test.each([
    ['the file', { file: 0o666 }],
    ['its .data directory', { dir: 0o777 }],
    ['the file, by its group', { file: 0o660 }],
  ])(
    'a stack.json when other users can write %s: ignored with a warning on stderr, its key sent nowhere',
    async (_what, modes) => {
      const listener = await recordingListener();
      try {
        const cwd = plantStackFile({ api_url: listener.url, demo_api_key: 'amy_planted_secret' }, modes);
        const run = await runAmy(['memory', 'list'], { env: {}, cwd });
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(/^warning: ignoring .*\.data\/stack\.json: other users can write .*chmod go-w/m);
        expect(run.stderr).toMatch(/^error: No API key/m);
        expect(run.stderr).not.toContain('amy_planted_secret');
        expect(listener.connections()).toBe(0);
      } finally {
        await listener.close();
      }
    },
  );

  test('a stack.json whose api_url carries credentials is refused before any request', async () => {
    const listener = await recordingListener();
    try {
      const { port } = new URL(listener.url);
      const cwd = plantStackFile({ api_url: `http://user:pw@127.0.0.1:${port}`, demo_api_key: demo.user.apiKey });
      const run = await runAmy(['memory', 'list'], { env: {}, cwd });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^error: The api_url in .* must not hold a user name or password/);
      expect(listener.connections()).toBe(0);
    } finally {
      await listener.close();
    }
  });

  test('no key anywhere: exit 2 saying what to set', async () => {
    const run = await runAmy(['memory', 'list'], { env: {}, cwd: tempDir() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: No API key: set AMY_API_KEY, or start the local stack with `npm start`/);
  });

  test('a key the API refuses: exit 2 with its message, code and request id, no stack trace', async () => {
    const run = await runAmy(['ask', DATA_QUESTION], { env: { ...env, AMY_API_KEY: 'amy_not_a_key' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: The API key is not valid\. \(invalid_api_key, request req_\w+\)\n$/);
  });
});

describe('the command line', () => {
  test.each(['ask', 'watch', 'trace', 'turns get', 'turns cancel', 'memory list', 'memory add', 'memory rm', 'reset'])(
    '%s --help',
    async (command) => {
      const run = await runAmy([...command.split(' '), '--help'], { env: {} });
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^Usage: amy ${command}`));
    },
  );

  test('an unknown flag, a missing argument, an unknown command: usage errors, exit 2', async () => {
    for (const args of [
      ['ask', '--verbose', 'hi'],
      ['watch'],
      ['watch', 'turn_x', '--after', 'soon'],
      ['frobnicate'],
    ]) {
      const run = await runAmy(args, { env });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^error: .*--help/);
    }
  });

  test('`npx amy` resolves from the repository root after npm install', async () => {
    const { stdout } = await promisify(execFile)('npx', ['--no-install', 'amy', '--help'], { cwd: REPO_ROOT });
    expect(stdout).toMatch(/^amy: ask Amy and watch her think/);
  });
});

describe('the live view in a terminal', () => {
  test('a data question through a pseudo-terminal: redrawn in place, never cleared, answer and gates on screen', async () => {
    const command = `stty cols 100 rows 40; exec ${process.execPath} ${AMY_BIN} ask '${DATA_QUESTION}'`;
    const terminal = startAmy([], {
      env: { ...env, NO_COLOR: '1', TERM: 'xterm-256color' },
      command: ['script', ['-q', '-e', '-c', command, '/dev/null']],
    });
    const run = await terminal.exited;
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(CLEAR_SCREEN);
    expect(run.stdout).not.toMatch(COLOUR_CODE);
    expect(run.stdout).toContain('\x1b[1A\x1b[2K');
    const screen = screenAfter(run.stdout);
    const [, turnId] = /● (turn_\w+) started/.exec(screen.join('\n'))!;
    const { result } = await amy.turns.get(turnId);
    expect(screen.join('\n')).toContain(result!.answer.trim());
    expect(screen).toContainEqual(expect.stringMatching(/^ {2}ds-\d+ +✓( [✓–✗·]){7} +critic accept /));
    expect(screen).toContain('Fact sheet');
    // Nothing of the live tail is left: no spinner row survives the end.
    expect(screen.filter((row) => /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /.test(row))).toEqual([]);
  });
});
