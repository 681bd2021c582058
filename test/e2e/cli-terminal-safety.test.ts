/**
 * Terminal-safe output: no string the service sends reaches the user's terminal able to act on it.
 * Escape sequences (an OSC window title ending in BEL, an OSC 8 link, a clear-screen CSI, an 8-bit
 * CSI) and a bidi override are fed through every path `amy` prints from, and its output is checked
 * for anything a terminal would act on beyond the live view's own cursor-up, erase-line and colour:
 *
 * - from the real service: memory text written through the API (`amy memory`, `--json`, `amy reset`),
 *   a question and the model's streamed text (a Domain Expert that answers with the sequences) in the
 *   live view through a real pseudo-terminal, `amy turns get`, and error messages that quote what was
 *   sent (`amy data profile set --file`, `amy data upload`);
 * - from a served turn, for what the service itself never lets a user or a model write (ids, steps,
 *   fact-sheet units and windows, error codes, account deletion details, health-data rows, a 503's
 *   message in the reconnect notice): the live view in a pseudo-terminal, plain output, `--json`,
 *   `amy turns get|cancel`, `amy data list`, `amy data profile`, `amy data connections`, `amy account delete`.
 */
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Amy } from '@amy/sdk';
import { defaultRules } from '../../dev/scripted-model/rules';
import type { ScriptedRule } from '../../dev/scripted-model/types';
import { AMY_BIN, ensureCliBuilt } from '../support/workspace-build';
import { runAmy, startAmy, type AmyRun } from '../support/cli/run-amy';
import { screenAfter } from '../support/cli/virtual-terminal';
import { startDemoService, type DemoService } from '../support/service';

jest.setTimeout(120_000);

/* eslint-disable no-control-regex -- control characters are what this suite looks for */
/** A window title (OSC 0, BEL), a link (OSC 8, ST), a clear screen, an 8-bit CSI, a right-to-left override. */
const HOSTILE = '\u001b]0;pwned\u0007\u001b]8;;https://evil.example\u001b\\\u001b[2J\u009b31m\u202e';
/** `text` with the sequences after it, in brackets: sanitised, `text[[]]` is left. */
const h = (text: string) => `${text}[[${HOSTILE}]]`;
/**
 * For the model's text: the same kinds without a digit or a URL, which the fact check and the Domain
 * Expert's URL guard would otherwise act on before the sequences reach the stream.
 */
const MODEL_HOSTILE = '\u001b]pwned\u0007\u001bPpwned\u001b\\\u001b[J\u009bH\u202e';

/** Anything a terminal acts on but newlines (and the CR a pseudo-terminal adds): C0, DEL, C1, bidi controls. */
const ACTIVE = /[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
/** The live view's own sequences: cursor up, erase line, colour. */
const OWN_SEQUENCES = /\x1b\[(?:1A|2K|K|[\d;]*m)/g;

/** Nothing in the output can act on a terminal, and (when given) the sanitised text is there. */
function expectInert(output: string, ...visible: string[]) {
  const rest = output.replace(OWN_SEQUENCES, '');
  const at = rest.search(ACTIVE);
  if (at !== -1)
    throw new Error(`a control character reached the output: ${JSON.stringify(rest.slice(at - 20, at + 20))}`);
  expect(rest).not.toContain('pwned');
  for (const text of visible) expect(rest).toContain(text);
}

/** NDJSON that scripts read: the values keep the sequences (escaped as \uXXXX), the bytes hold none. */
function expectInertJson(stdout: string) {
  expectInert(stdout.replace(/pwned/g, ''));
  const values = stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);
  expect(JSON.stringify(values)).toContain('pwned');
  return values;
}

/** `amy <args>` in a real pseudo-terminal (util-linux `script`), 100 columns wide. */
async function inTerminal(args: string, env: Record<string, string>): Promise<AmyRun> {
  const command = `stty cols 100 rows 40; exec ${process.execPath} ${AMY_BIN} ${args}`;
  return startAmy([], {
    env: { ...env, NO_COLOR: '1', TERM: 'xterm-256color' },
    command: ['script', ['-q', '-e', '-c', command, '/dev/null']],
  }).exited;
}

beforeAll(() => ensureCliBuilt());

describe('strings from the real service', () => {
  /** A Domain Expert whose every reply carries the sequences, streamed like any model text. */
  const hostileExpert: ScriptedRule = {
    step: 'domain_expert',
    respond: () => ({
      text: `Heart rate variability[[${MODEL_HOSTILE}]] is the variation in time between heartbeats.`,
    }),
  };
  let demo: DemoService;
  let env: Record<string, string>;
  let amy: Amy;

  beforeAll(async () => {
    demo = await startDemoService({
      scripted: { rules: [hostileExpert, ...defaultRules.filter((rule) => rule.step !== 'domain_expert')] },
    });
    const user = await demo.svc.createUser();
    env = { AMY_API_KEY: user.apiKey, AMY_BASE_URL: demo.svc.url };
    amy = new Amy({ apiKey: user.apiKey, baseUrl: demo.svc.url });
  }, 120_000);
  afterAll(() => demo?.close());

  test('memory text written through the API: amy memory, --json, and amy reset', async () => {
    await amy.memory.create({ category: 'goal', text: h('Run a 10k') });
    const listed = await runAmy(['memory'], { env });
    expect(listed.code).toBe(0);
    expectInert(listed.stdout, 'Run a 10k[[]]');
    expectInertJson((await runAmy(['memory', 'list', '--json'], { env })).stdout);
    const added = await runAmy(['memory', 'add', 'preference', h('No fish')], { env });
    expectInert(added.stdout, 'No fish[[]]');
    const reset = await runAmy(['reset', '--yes'], { env });
    expect(reset.code).toBe(0);
    expectInert(reset.stdout + reset.stderr, 'Deleted 2 memory entries');
  });

  test('a question and the model’s streamed text, live in a pseudo-terminal, then amy turns get and --json', async () => {
    // The demo user, whose data gives the Domain Expert's draft the lead in the answer.
    const demoEnv = { AMY_API_KEY: demo.user.apiKey, AMY_BASE_URL: demo.svc.url };
    const run = await inTerminal('ask "$QUESTION"', {
      ...demoEnv,
      QUESTION: `What is heart rate variability? ${h('')}`,
    });
    expect(run.code).toBe(0);
    // The virtual terminal throws on any sequence but cursor-up, erase-line and colour.
    const screen = screenAfter(run.stdout).join('\n');
    expectInert(run.stdout, 'Heart rate variability[[]]');
    expect(screen).toMatch(/▸ domain_expert What is heart rate variability\? \[\[\]\]/);
    const [, turnId] = /● (turn_\w+) started/.exec(screen)!;

    const got = await runAmy(['turns', 'get', turnId], { env: demoEnv });
    expect(got.code).toBe(0);
    expectInert(got.stdout, 'What is heart rate variability? [[]]', 'Heart rate variability[[]]');

    const json = await runAmy(['watch', turnId, '--json'], { env: demoEnv });
    const events = expectInertJson(json.stdout) as Array<{ type: string; agent?: string; delta?: string }>;
    const streamed = events.filter((e) => e.type === 'agent.thought' && e.agent === 'domain_expert');
    expect(streamed.map((e) => e.delta).join('')).toContain(MODEL_HOSTILE);
    // Plain output (a pipe) carries no escape sequence at all, the live view's own included.
    const plain = await runAmy(['watch', turnId], { env: demoEnv });
    expect(plain.stdout).not.toContain('\u001b');
    expectInert(plain.stdout, 'Heart rate variability[[]]');
  });

  test('error messages that quote what was sent: a profile file and an upload refused by the API', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-hostile-'));
    const profile = path.join(dir, 'profile.json');
    fs.writeFileSync(
      profile,
      JSON.stringify({ sex: 'female', birth_year: 1990, height_cm: 170, weight_kg: 60, [h('nickname')]: 'x' }),
    );
    const refused = await runAmy(['data', 'profile', 'set', '--file', profile], { env });
    expect(refused.code).toBe(2);
    expectInert(refused.stderr, 'Unknown field: nickname[[]]');

    const rows = path.join(dir, 'daily.jsonl');
    fs.writeFileSync(rows, `${JSON.stringify({ date: '2025-01-01', steps: 100, [h('mood')]: 1 })}\n`);
    const upload = await runAmy(['data', 'upload', 'daily', rows], { env });
    expect(upload.code).toBe(2);
    expectInert(upload.stderr, 'mood[[]]');
    const jsonUpload = await runAmy(['data', 'upload', 'daily', rows, '--json'], { env });
    expectInertJson(jsonUpload.stdout);
  });
});

describe('strings from a served turn', () => {
  const COMPLETED = 'turn_01HOSTILE0000000000000001';
  const FAILED = 'turn_01HOSTILE0000000000000002';
  const at = '2026-11-23T10:00:00.000Z';
  const result = {
    answer: `${h('Answer')} Your resting heart rate averaged 58.2 bpm.`,
    fact_sheet: [
      {
        claim: h('ds-001.mean'),
        value: 58.2,
        unit: h('bpm'),
        source: 'data_science',
        n: 88,
        window: h('last 90 days'),
      },
    ],
    agents_used: [h('data_science')],
    validator: { findings_total: 1, findings_validated: 1, findings_conditional: 0, findings_rejected: 0 },
    cost_usd: 0.05,
    duration_ms: 16000,
  };
  const error = { code: h('model_error'), message: h('The model failed'), request_id: h('req_1'), docs_url: '' };
  /** The Data Science narration, in deltas that cut the sequences apart. */
  const narration = `Plan ${HOSTILE} take the mean.\nComputed ${HOSTILE} over 88 days.`;
  const completedEvents: Array<[string, object]> = [
    ['turn.started', { turn_id: h(COMPLETED), at }],
    ['agent.started', { agent: 'data_science', at, question: h('Compute the mean') }],
    ...(narration.match(/[\s\S]{1,5}/g) ?? []).map((delta): [string, object] => [
      'agent.thought',
      { agent: 'data_science', delta, attempt: 1, step: 'ds_plan' },
    ]),
    ['step.retry', { step: h('ds_summary'), attempt: 2, reason: h('previous attempt failed'), at }],
    [
      'agent.completed',
      { agent: 'data_science', at, duration_ms: 900, cost_usd: 0.01, output_summary: h('Mean computed') },
    ],
    [
      'validator.gate',
      {
        finding_id: h('ds-001'),
        claim: h('mean resting heart rate'),
        gate: 'sample_size',
        verdict: 'passed',
        detail: {},
      },
    ],
    ['validator.critic', { finding_id: h('ds-001'), verdict: 'accept', reasoning: h('fine'), concerns: [h('none')] }],
    ['fact_check', { issues: [{ value: 42, severity: 'warn' }] }],
    ['turn.completed', { turn_id: h(COMPLETED), result }],
  ];
  const failedEvents: Array<[string, object]> = [
    ['turn.started', { turn_id: h(FAILED), at }],
    ['turn.failed', { turn_id: h(FAILED), error, cost_usd: 0.01 }],
  ];
  const sse = (events: Array<[string, object]>) =>
    events.map(([type, data], i) => `id: ${i + 1}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`).join('');
  const storedTurn = (id: string, status: 'completed' | 'failed' | 'running') => ({
    id: h(id),
    object: 'turn',
    status,
    attempt: 1,
    messages: [{ role: 'user', content: h('How is my resting heart rate?') }],
    context: { include_memory: true, include_biomarkers: true },
    created_at: h(at),
    started_at: at,
    completed_at: status === 'running' ? null : h(at),
    duration_ms: 16000,
    progress:
      status === 'running'
        ? { current_step: h('ds_plan'), completed_steps: [h('route')], cost_usd_so_far: 0.01 }
        : null,
    result: status === 'completed' ? result : null,
    error: status === 'failed' ? error : null,
    cost_usd: 0.05,
    last_event_id: 9,
  });
  const page = (data: object[]) => ({ data, next_cursor: null, has_more: false });

  let server: http.Server;
  let env: Record<string, string>;
  /** The first connection to each event stream is refused with a 503 whose message carries the sequences. */
  const refusedOnce = new Set<string>();

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://served');
      const json = (status: number, body: object, headers: Record<string, string> = {}) =>
        res
          .writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_served', ...headers })
          .end(JSON.stringify(body));
      const events = /^\/v1\/turns\/([^/]+)\/events$/.exec(url.pathname);
      if (events) {
        const id = events[1];
        if (!refusedOnce.has(id)) {
          refusedOnce.add(id);
          const unavailable = {
            code: 'service_unavailable',
            message: h('Back soon'),
            request_id: 'req_1',
            docs_url: '',
          };
          return json(503, { error: unavailable }, { 'retry-after': '0' });
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return res.end(sse(id === FAILED ? failedEvents : completedEvents));
      }
      const turn = /^\/v1\/turns\/([^/]+)(\/cancel)?$/.exec(url.pathname);
      if (turn) {
        const status = turn[2] ? 'running' : turn[1] === FAILED ? 'failed' : 'completed';
        return json(200, storedTurn(turn[1], status));
      }
      if (url.pathname === '/v1/data/workouts') {
        const workout = { date: '2025-01-01', type: h('running'), duration_minutes: 30, distance_km: 5 };
        return json(200, page([{ ...workout, calories: null, avg_heart_rate: null, external_id: h('w-1') }]));
      }
      if (url.pathname === '/v1/data/labs') {
        const lab = {
          date: '2025-01-01',
          biomarker: h('ldl_cholesterol'),
          value: 124,
          unit: h('mg/dL'),
          loinc: h('1'),
        };
        return json(200, page([lab]));
      }
      if (url.pathname === '/v1/data/profile') {
        return json(200, { sex: h('female'), birth_year: 1990, height_cm: 170, weight_kg: 60 });
      }
      if (url.pathname === '/v1/data/connections') {
        const at = '2026-11-23T10:00:00.000Z';
        const connection = {
          terra_user_id: h('terra_1'),
          provider: h('OURA'),
          status: h('error'),
          scopes: [h('sleep')],
        };
        return json(200, { data: [{ ...connection, connected_at: null, updated_at: at }] });
      }
      if (url.pathname === '/v1/account' && req.method === 'DELETE') {
        return json(200, {
          deleted_at: h(at),
          erased: { [h('turns')]: 2 },
          kept: [{ what: h('logs'), why: h('law') }],
        });
      }
      return json(404, {
        error: { code: 'not_found', message: h('No such thing'), request_id: 'req_2', docs_url: '' },
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    env = { AMY_API_KEY: 'amy_served', AMY_BASE_URL: `http://127.0.0.1:${port}`, AMY_RETRY_DELAY_MS: '1' };
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => refusedOnce.clear());

  test('the live view in a pseudo-terminal: every block, the live tail and the reconnect notice', async () => {
    const run = await inTerminal(`watch ${COMPLETED}`, env);
    expect(run.code).toBe(0);
    const screen = screenAfter(run.stdout).join('\n');
    expectInert(run.stdout);
    for (const shown of [
      'connection lost (Back soon[[]])',
      'Compute the mean[[]]',
      'ds_summary[[]] runs again (attempt 2): previous attempt failed[[]]',
      'ds-001[[]]',
      'mean resting heart rate[[]]',
      'Answer[[]] Your resting heart rate averaged 58.2 bpm.',
      'last 90 days[[]]',
      'bpm[[]]',
      'data_science[[]]',
    ]) {
      expect(screen).toContain(shown);
    }
  });

  test('a failed turn: its error in the live view, and on stderr with --json', async () => {
    const run = await inTerminal(`watch ${FAILED}`, env);
    expect(run.code).toBe(1);
    expectInert(run.stdout, 'The model failed[[]] (model_error[[]], request req_1[[]])');
    screenAfter(run.stdout);
    const json = await runAmy(['watch', FAILED, '--json'], { env });
    expect(json.code).toBe(1);
    expectInertJson(json.stdout);
    expectInert(json.stderr, 'The model failed[[]]');
  });

  test('plain output and --json of the same turn', async () => {
    const plain = await runAmy(['watch', COMPLETED], { env });
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toContain('\u001b');
    expectInert(plain.stdout + plain.stderr, 'Answer[[]]', 'Plan  take the mean.');
    refusedOnce.clear();
    const json = await runAmy(['watch', COMPLETED, '--json'], { env });
    expectInertJson(json.stdout);
    expectInert(json.stderr, 'Back soon[[]]');
  });

  test('amy turns get and cancel, amy data list, profile and connections, amy account delete, and a 404’s message', async () => {
    for (const [args, ...visible] of [
      [['turns', 'get', COMPLETED], 'How is my resting heart rate?[[]]', 'Answer[[]]', 'data_science[[]]'],
      [['turns', 'get', FAILED], 'The model failed[[]] (model_error[[]], request req_1[[]])'],
      [['turns', 'cancel', COMPLETED], 'Cancelling turn_01HOSTILE0000000000000001[[]]'],
      [['data', 'list', 'workouts'], 'running[[]]', 'w-1[[]]'],
      [['data', 'list', 'labs'], 'ldl_cholesterol[[]]', 'mg/dL[[]]'],
      [['data', 'profile'], 'female[[]]'],
      [['data', 'connections'], 'OURA[[]]', 'error[[]]', 'terra_1[[]]'],
      [['account', 'delete', '--yes'], 'turns[[]]: 2', 'logs[[]]: law[[]]'],
      [['memory', 'rm', 'mem_1'], 'No such thing[[]]'],
    ] as Array<[string[], ...string[]]>) {
      const run = await runAmy(args, { env });
      expectInert(run.stdout + run.stderr, ...visible);
    }
    for (const args of [
      ['turns', 'get', COMPLETED, '--json'],
      ['data', 'list', 'labs', '--json'],
      ['data', 'profile', '--json'],
      ['data', 'connections', '--json'],
    ]) {
      expectInertJson((await runAmy(args, { env })).stdout);
    }
  });
});
