/**
 * The SDK as its documentation shows it, run against the real service in plain Node processes that
 * import the built `@amy/sdk` from the repository root, as a user would:
 *
 * - every code block of docs/sdk.md before its recipes, taken from the page as it stands, each a whole
 *   program;
 * - the recipes of docs/sdk.md and the TypeScript clients of docs/streaming.md ("Consuming the
 *   stream"), also as they stand. They assume an `amy` client and, where a program would draw on
 *   screen, `render` and `finish`; a prelude provides them, recording what they are given. The React
 *   Native client imports a stand-in with react-native-event-source's constructor.
 *
 * Memory pagination with entries added mid-way is checked here too, through the SDK.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Amy } from '@amy/sdk';
import { startChaosProxy } from '../support/chaos-proxy';
import { ensureSdkBuilt, REPO_ROOT } from '../support/workspace-build';
import { startDemoService, type DemoService } from '../support/service';

const run = promisify(execFile);
let demo: DemoService;

beforeAll(async () => {
  ensureSdkBuilt();
  demo = await startDemoService();
}, 120_000);
afterAll(() => demo?.close());

/** Runs ES module code in a fresh `node` whose working directory is the repository root. */
async function runModule(code: string, baseUrl = demo.svc.url): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(process.execPath, ['--input-type=module', '--eval', code], {
      cwd: REPO_ROOT,
      env: { ...process.env, AMY_API_KEY: demo.user.apiKey, AMY_BASE_URL: baseUrl },
      timeout: 120_000,
    });
  } catch (err) {
    const { stdout, stderr } = err as { stdout: string; stderr: string };
    throw new Error(`the example failed:\n${code}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`);
  }
}

const page = (name: string) => fs.readFileSync(path.join(REPO_ROOT, 'docs', name), 'utf8');

/** The text under a heading, up to the next heading of the same level or higher. */
function section(markdown: string, heading: string): string {
  const level = /^#+/.exec(heading)![0].length;
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const rest = markdown.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`\\n#{1,${level}} `));
  return end < 0 ? rest : rest.slice(0, end);
}

const tsBlocks = (markdown: string) => [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);

/** The one TypeScript example under a heading. */
function example(markdown: string, heading: string): string {
  const blocks = tsBlocks(section(markdown, heading));
  if (blocks.length !== 1) throw new Error(`"${heading}" has ${blocks.length} TypeScript examples, not one`);
  return blocks[0];
}

/** docs/sdk.md's whole programs: every TypeScript block before its recipes. */
function sdkPagePrograms(): string[] {
  const sdk = page('sdk.md');
  return tsBlocks(sdk.slice(0, sdk.indexOf('\n## Recipes\n')));
}

describe("docs/sdk.md's examples, as written", () => {
  const blocks = sdkPagePrograms();

  test('the page has its examples', () => expect(blocks.length).toBeGreaterThanOrEqual(3));

  test.each(blocks.map((code, i) => [i + 1, code]))(
    'example %i runs',
    async (_n, code) => {
      const { stdout } = await runModule(code as string);
      expect(stdout.length).toBeGreaterThan(0);
    },
    180_000,
  );

  test('the first example streams a data question to its answer', async () => {
    const { stdout } = await runModule(blocks[0]);
    expect(stdout).toMatch(/\[data_science\]/);
    // A description: its numbers reproduced from the rows, then the contract's gates for an average.
    expect(stdout).toMatch(/ds-001 · reproduction: passed/);
    expect(stdout).toMatch(/ds-001 · sample_size: passed/);
    expect(stdout).toMatch(/ds-001 · bootstrap: passed/);
    expect(stdout).toMatch(/bpm/);
  }, 180_000);
});

/** The recipes and clients assume an `amy`, a `render` and a `finish`; this prelude records what they get. */
const PRELUDE = `
import { Amy } from '@amy/sdk';
const amy = new Amy();
const report = { deltas: [], results: [] };
const render = (delta) => report.deltas.push(delta);
const finish = (result) => report.results.push(result);
`;
const REPORT_MARK = 'report: ';

/** Runs an example after the prelude, then `epilogue`; returns what it printed and what it recorded. */
async function runExample(
  code: string,
  epilogue = '',
  baseUrl?: string,
): Promise<{ lines: string[]; report: { deltas: string[]; results: unknown[] } }> {
  const { stdout } = await runModule(
    `${PRELUDE}\n${code}\n${epilogue}\nconsole.log(${JSON.stringify(REPORT_MARK)} + JSON.stringify(report));`,
    baseUrl,
  );
  const lines = stdout.trim().split('\n');
  const report = JSON.parse(lines.pop()!.slice(REPORT_MARK.length)) as { deltas: string[]; results: unknown[] };
  return { lines, report };
}

/** `<id> <type>` lines, as the streaming clients print each event: ids from 1, gapless, the terminal event last. */
function expectWholeStream(lines: string[]) {
  const events = lines.filter((line) => /^\d+ \S+$/.test(line)).map((line) => line.split(' '));
  expect(events.map(([id]) => Number(id))).toEqual(events.map((_, i) => i + 1));
  expect(events.at(-1)?.[1]).toBe('turn.completed');
}

describe("docs/sdk.md's recipes, as written", () => {
  const sdk = page('sdk.md');

  test('a conversation: the whole conversation goes in messages', async () => {
    const { report } = await runExample(example(sdk, '### A conversation'), 'report.results.push(turn);');
    const [turn] = report.results as Array<{ id: string; messages: Array<{ role: string }> }>;
    expect(turn.id).toMatch(/^turn_/);
    expect(turn.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  }, 120_000);

  test('a turn without memory', async () => {
    const { report } = await runExample(example(sdk, '### A turn without memory'), 'report.results.push(turn);');
    expect((report.results as Array<{ status: string }>)[0].status).toMatch(/queued|running/);
  }, 120_000);

  test('streaming while someone watches: render the thoughts, finish with the result', async () => {
    const { report } = await runExample(example(sdk, '### Streaming while someone watches'));
    const [result] = report.results as Array<{ answer: string }>;
    expect(report.deltas.join('')).toBe(result.answer);
  }, 120_000);

  test('blocking when no one watches: the turn comes back ended, with its answer', async () => {
    const { lines, report } = await runExample(
      example(sdk, '### Blocking when no one watches'),
      'report.results.push(turn);',
    );
    const [turn] = report.results as Array<{ status: string; result: { answer: string } | null }>;
    expect(turn.status).toBe('completed');
    expect(turn.result?.answer.length).toBeGreaterThan(0);
    expect(lines.join('\n')).toContain(`completed ${turn.result!.answer.split('\n')[0]}`);
  }, 180_000);

  test('memory entries: write, list by category, delete', async () => {
    const { report } = await runExample(
      example(sdk, '### Memory entries'),
      'report.results.push({ fact, goals, after: (await amy.memory.list({ category: "preference" })).data });',
    );
    const [{ fact, goals, after }] = report.results as Array<{
      fact: { id: string; source_turn_id: null };
      goals: Array<{ category: string }>;
      after: Array<{ id: string }>;
    }>;
    expect(fact.source_turn_id).toBeNull();
    expect(goals.every((m) => m.category === 'goal')).toBe(true);
    expect(after.map((m) => m.id)).not.toContain(fact.id);
  }, 120_000);
});

describe("docs/streaming.md's TypeScript clients, as written", () => {
  const streaming = page('streaming.md');

  test('the SDK iterator, its connection cut before the terminal event: onReconnect gets the last id, the stream goes on', async () => {
    const code = example(streaming, '### The TypeScript SDK');
    // The contract's own example (docs/streaming.md keeps it as written): the last id comes first.
    expect(code).toContain("onReconnect: (lastId) => console.log('Reconnecting from', lastId)");
    // Through a proxy that cuts the first event stream just before its terminal event: the example's
    // callback has to run, and the reconnection brings the rest.
    const proxy = await startChaosProxy(demo.svc.url, {
      cutAfterBytes: () => null,
      cutBefore: ({ requestLine }) =>
        proxy.cuts() === 0 && /^GET \S+\/events/.test(requestLine) ? 'event: turn.completed' : null,
    });
    try {
      const { lines } = await runExample(code, '', proxy.url);
      expect(proxy.cuts()).toBe(1);
      const at = lines.findIndex((line) => line.startsWith('Reconnecting from'));
      expect(at).toBeGreaterThan(0);
      const lastSeen = Number(lines[at - 1].split(' ')[0]);
      expect(lines[at]).toBe(`Reconnecting from ${lastSeen}`);
      expect(lines[at + 1]).toBe(`${lastSeen + 1} turn.completed`);
      expectWholeStream(lines);
    } finally {
      await proxy.close();
    }
  }, 120_000);

  test('React Native: the same iterator over an EventSource that takes headers', async () => {
    const standIn = path.join(REPO_ROOT, 'test/support/react-native-event-source.mjs');
    const code = example(streaming, '### React Native').replace(
      /from ['"]react-native-event-source['"]/,
      `from ${JSON.stringify(standIn)}`,
    );
    expect(code).toContain(standIn);
    // The client is given an `apiKey` and a `turnId`; it imports `Amy` itself, so the prelude is not used.
    const { stdout } = await runModule(`
const { Amy: Client } = await import('@amy/sdk');
const apiKey = process.env.AMY_API_KEY;
const turnId = (await new Client({ apiKey }).turns.create({ messages: [{ role: 'user', content: 'thanks!' }] })).id;
${code}`);
    expectWholeStream(stdout.trim().split('\n'));
  }, 120_000);
});

test('memory iterated across pages while entries are added: every entry that existed once, newest first', async () => {
  const user = await demo.svc.createUser();
  const amy = new Amy({ apiKey: user.apiKey, baseUrl: demo.svc.url });
  const written: string[] = [];
  for (let i = 0; i < 23; i++) written.push((await amy.memory.create({ text: `note ${i}`, category: 'history' })).id);
  const seen: string[] = [];
  let added = 0;
  for await (const memory of amy.memory.list({ limit: 5 })) {
    seen.push(memory.id);
    // New entries land while the pages are read: they are newer than the cursor, so they never show up
    // in this walk, and nothing that was there is skipped or repeated.
    if (seen.length % 5 === 0) {
      await amy.memory.create({ text: `late note ${added++}`, category: 'history' });
    }
  }
  expect(added).toBeGreaterThanOrEqual(4);
  expect(seen).toEqual([...written].reverse());
  expect((await amy.memory.list({ limit: 100 })).data).toHaveLength(23 + added);
}, 120_000);
