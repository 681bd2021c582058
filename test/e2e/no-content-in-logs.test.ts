/**
 * No content in logs, the privacy rule for every process: at `info`, the most verbose level below `debug` (the logger's
 * levels are debug · info · warn · error, so `info` writes everything `warn` and `error` do too), no
 * message, answer, memory text or health-data value reaches a log line of any process of the service.
 *
 * Every process runs as `npm start` runs it, its output captured whole, stdout and stderr, from start
 * to shutdown:
 * - the API (`api/main.ts`) and the worker (`worker/main.ts`) at LOG_LEVEL=info; the worker's lines
 *   include the Temporal SDK's and Core's (the Python gates' and the sandbox's stderr reach a log only
 *   inside an error message, which is a line of the worker's);
 * - the scripted model server (`dev/scripted-model/main.ts`, which logs at info);
 * - a Temporal dev server of this suite's own at `--log-level info` (the shared one's output is not
 *   reachable from a suite), and a Postgres cluster of its own with the harness's settings, whose
 *   server log (`server.log`) is read once it has stopped.
 *
 * Through the real API, a new user stores daily rows (one with a distinctive value) and a memory entry,
 * sends requests the API refuses that hold made-up words where text or numbers go, and asks a data
 * question whose message holds a distinctive sentence and a goal the memory step extracts. The scripted
 * model makes the analysis code fail once (the debug loop) and the first synthesis state an untraced
 * number (the fact-check's repair), so the worker's error paths run too. Then no line of any process
 * holds those words (as text, JSON-escaped, or inside base64 as a logged payload's data would be), the
 * sentences, the stored value, the memory texts or the answer's first sentence.
 */
import type { ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Amy, type Turn, type TurnStreamEvent } from '@amy/sdk';
import { Client, Pool } from 'pg';
import { launch, stopChild, type LaunchedProcess } from '../../dev/stack/child-process';
import { startLocalPostgres, throwawayClusterDir, type LocalPostgres } from '../../dev/stack/local-postgres';
import { temporalCliPath } from '../../dev/stack/local-temporal';
import { freePort, isListening } from '../../dev/stack/ports';
import { loadConfig } from '../../platform/config';
import { formatIsoDate } from '../../contracts/health-records';
import { createUserWithApiKey } from '../../platform/users';
import { spawnApiProcess, type ApiProcess } from '../support/api-process';
import { spawnWorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

const migrationsDir = path.resolve(__dirname, '..', '..', 'prisma', 'migrations');

/** A made-up word no log could hold by chance: eight to ten letters, capitalised. */
function nonceWord(): string {
  const consonants = 'bcdfghjklmnprstvwxz';
  const vowels = 'aeiou';
  let word = '';
  for (let i = randomInt(4, 6); i > 0; i--) word += consonants[randomInt(consonants.length)] + vowels[randomInt(5)];
  return word[0].toUpperCase() + word.slice(1);
}
const words = (n: number) => Array.from({ length: n }, nonceWord);

/**
 * How `word` reads inside the base64 of any text that holds it (a payload's `data` as the Temporal SDK
 * logs it), at each of the three alignments: the characters of the 3-byte groups wholly inside it.
 */
function base64Forms(word: string): string[] {
  return [0, 1, 2].map((shift) => {
    const encoded = Buffer.concat([Buffer.alloc(shift), Buffer.from(word)]).toString('base64');
    return encoded.slice(shift === 0 ? 0 : 4, Math.floor((shift + word.length) / 3) * 4);
  });
}

const [neighbour, neighbourSurname, blender] = words(3);
const [trail, trailRegion] = words(2);
const [club, clubTown] = words(2);
const refused = words(3);

const QUESTION = 'What is my average resting heart rate over the last 30 days?';
/** A sentence of the message that is neither a question nor a fact the memory step keeps. */
const MESSAGE_SENTENCE = `My neighbour ${neighbour} ${neighbourSurname} lent me a ${blender} blender yesterday.`;
/** A goal the memory step extracts from the message, word for word. */
const EXTRACTED_MEMORY = `I want to walk the ${trail} ${trailRegion} trail with my sister next spring.`;
/** A memory entry the user writes through the API. */
const WRITTEN_MEMORY = `I prefer swimming at the ${club} club in ${clubTown} before work.`;
/** A value nobody's data has by chance, stored on one day; its digits as any log would print them. */
const DISTINCTIVE_RHR = 71.4863;

/**
 * Requests the API refuses, each holding a refused word or the distinctive value where a user's text or
 * number would go: a bad value, an unknown field, a bad category, a NUL, a body that is not JSON, a
 * query that names nothing, an id that is nobody's.
 */
const REFUSED: Array<{ method: string; path: string; body?: unknown; raw?: string; status: number }> = [
  {
    method: 'POST',
    path: '/v1/data/daily',
    body: { rows: [{ date: '2026-03-02', resting_heart_rate: `${refused[0]} ${DISTINCTIVE_RHR}` }] },
    status: 400,
  },
  { method: 'POST', path: '/v1/data/daily', body: { rows: [{ date: refused[0], steps: 1 }] }, status: 400 },
  {
    method: 'POST',
    path: '/v1/data/daily',
    body: { rows: [{ date: '2026-03-02', [refused[0]]: DISTINCTIVE_RHR }] },
    status: 400,
  },
  {
    method: 'POST',
    path: '/v1/data/labs',
    body: {
      resourceType: 'Bundle',
      entry: [{ resource: { resourceType: 'Observation', code: { text: refused[0] }, valueQuantity: { value: 1 } } }],
    },
    status: 400,
  },
  { method: 'PUT', path: '/v1/data/profile', body: { sex: refused[0] }, status: 400 },
  { method: 'POST', path: '/v1/memory', body: { category: refused[1], text: WRITTEN_MEMORY }, status: 400 },
  { method: 'POST', path: '/v1/memory', body: { category: 'goal', text: `${refused[1]}\u0000` }, status: 400 },
  {
    method: 'POST',
    path: '/v1/turns',
    body: { messages: [{ role: 'user', content: MESSAGE_SENTENCE }], [refused[2]]: true },
    status: 400,
  },
  {
    method: 'POST',
    path: '/v1/turns',
    raw: `{"messages": [{"role": "user", "content": "${refused[2]} ${MESSAGE_SENTENCE}"`,
    status: 400,
  },
  { method: 'GET', path: `/v1/memory?category=${refused[2]}`, status: 400 },
  { method: 'GET', path: `/v1/turns/turn_${refused[2]}`, status: 404 },
];

/** 60 days of resting heart rate ending on a fixed day, the last one distinctive. */
const LAST = new Date('2026-03-01T00:00:00Z');
const DAILY = Array.from({ length: 60 }, (_, i) => ({
  date: formatIsoDate(new Date(LAST.getTime() - (59 - i) * 86_400_000)),
  resting_heart_rate: i === 59 ? DISTINCTIVE_RHR : 58 + ((i * 7) % 9),
  steps: 6000 + ((i * 1379) % 5000),
}));

/** Every line each process wrote, by process. */
const logs = new Map<string, string[]>();
const capture = (name: string) => {
  const lines: string[] = [];
  logs.set(name, lines);
  return (line: string) => void lines.push(line);
};

let postgres: LocalPostgres;
let postgresDir: { dataDir: string; remove(): void };
let temporal: LaunchedProcess;
let scripted: LaunchedProcess & { ready: string };
let worker: ChildProcess;
let apiProcess: ApiProcess;
let amy: Amy;
let apiKey: string;

async function applyMigrationSql(url: string) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    for (const name of fs.readdirSync(migrationsDir).sort()) {
      const file = path.join(migrationsDir, name, 'migration.sql');
      if (fs.existsSync(file)) await client.query(fs.readFileSync(file, 'utf8'));
    }
  } finally {
    await client.end();
  }
}

async function startService() {
  postgresDir = throwawayClusterDir('amy-test-pg-logs-');
  const temporalPort = await freePort();
  const [pg, temporalServer, scriptedServer] = await Promise.all([
    startLocalPostgres({ dataDir: postgresDir.dataDir, database: 'amy' }),
    launch({
      name: 'the Temporal dev server',
      command: temporalCliPath(),
      // As the harness starts it (dev/stack/local-temporal.ts), but at info rather than warn.
      args: [
        'server',
        'start-dev',
        '--ip',
        '127.0.0.1',
        '--port',
        String(temporalPort),
        '--headless',
        '--log-level',
        'info',
      ],
      onLine: capture('temporal'),
      ready: { check: async () => ((await isListening(temporalPort)) ? true : undefined) },
      timeoutMs: 60_000,
    }),
    launch({
      name: 'the scripted model',
      entry: 'dev/scripted-model/main.ts',
      env: { SCRIPTED_MODEL_PORT: '0', SCRIPTED_MODEL_BROKEN_CODE: 'first', SCRIPTED_MODEL_UNTRACED_NUMBER: 'first' },
      onLine: capture('scripted-model'),
      ready: {
        line: (line) => (line.includes('scripted model listening') ? (JSON.parse(line).url as string) : undefined),
      },
    }),
  ]);
  postgres = pg;
  temporal = temporalServer;
  scripted = scriptedServer;
  await applyMigrationSql(postgres.url);

  const config = loadConfig({
    DATABASE_URL: postgres.url,
    TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
    TEMPORAL_TASK_QUEUE: 'amy-turns',
    ANTHROPIC_BASE_URL: scripted.ready,
    LOG_LEVEL: 'info',
  });
  [worker, apiProcess] = await Promise.all([
    spawnWorkerProcess(config, { env: { LOG_LEVEL: 'info' }, onLine: capture('worker') }),
    freePort().then((port) => spawnApiProcess(config, port, { onLine: capture('api') })),
  ]);

  const pool = new Pool({ connectionString: postgres.url, max: 1 });
  try {
    ({ apiKey } = await createUserWithApiKey(pool, 'logscan'));
  } finally {
    await pool.end();
  }
  amy = new Amy({ apiKey, baseUrl: apiProcess.url, maxRetries: 0 });
}

/** Stops every process (each writes its shutdown lines) and reads the Postgres server's log. */
async function stopService() {
  await Promise.all([apiProcess?.stop(), worker && stopChild(worker)]);
  await Promise.all([scripted?.stop(), temporal?.stop(), postgres?.stop()]);
  if (postgresDir) {
    const file = path.join(postgresDir.dataDir, 'server.log');
    logs.set('postgres', fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n') : []);
    postgresDir.remove();
  }
}

let turn: Turn;
let events: TurnStreamEvent[];
let memories: string[];
const refusals: number[] = [];

beforeAll(async () => {
  try {
    await startService();

    expect(await amy.data.daily.upsert(DAILY)).toEqual({ inserted: DAILY.length, updated: 0 });
    await amy.memory.create({ category: 'preference', text: WRITTEN_MEMORY });

    for (const request of REFUSED) {
      const res = await fetch(`${apiProcess.url}${request.path}`, {
        method: request.method,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: request.raw ?? (request.body === undefined ? undefined : JSON.stringify(request.body)),
      });
      refusals.push(res.status);
    }

    const created = await amy.turns.create({
      messages: [{ role: 'user', content: `${QUESTION} ${MESSAGE_SENTENCE} ${EXTRACTED_MEMORY}` }],
    });
    events = [];
    for await (const event of amy.turns.stream(created.id)) events.push(event);
    turn = await amy.turns.get(created.id);
    memories = [];
    for await (const entry of amy.memory.list()) memories.push(entry.text);
  } finally {
    await stopService();
  }
});

describe('the run exercised what the scan looks for', () => {
  test('the turn completed with a data answer, after the debug loop and the fact-check repair', () => {
    expect(turn.status).toBe('completed');
    expect(turn.result!.agents_used).toEqual(['data_science']);
    expect(turn.result!.answer).toMatch(/\d+\.\d+ bpm/);
    const narration = events.flatMap((e) => (e.type === 'agent.thought' ? [e.delta] : [])).join('');
    expect(narration).toContain('[analysis failed');
    expect(turn.result!.fact_check!.repairs.resynthesised).toBe(true);
  });

  test('the memory step kept the goal from the message, beside the entry the user wrote', () => {
    expect(memories).toEqual(expect.arrayContaining([WRITTEN_MEMORY, EXTRACTED_MEMORY]));
  });

  test('every refused request was refused with its status', () => {
    expect(refusals).toEqual(REFUSED.map((r) => r.status));
  });

  test('every process wrote lines, and each was captured', () => {
    const seen = (name: string, text: string) => logs.get(name)!.some((line) => line.includes(text));
    expect(seen('api', 'turn started')).toBe(true);
    expect(seen('worker', 'worker polling')).toBe(true);
    expect(seen('scripted-model', 'scripted model listening')).toBe(true);
    expect(logs.get('temporal')!.length).toBeGreaterThan(0);
    expect(seen('postgres', 'database system is ready to accept connections')).toBe(true);
  });
});

test('no log line of any process holds the message, the answer, memory text or a data value', () => {
  const answerFirstSentence = turn.result!.answer.split(/(?<=[.!?])\s+/)[0];
  const madeUp = [neighbour, neighbourSurname, blender, trail, trailRegion, club, clubTown, ...refused];
  const content = {
    'a made-up word of the message': [neighbour, neighbourSurname, blender, trail, trailRegion],
    'a made-up word in base64': madeUp.flatMap(base64Forms),
    'the message’s distinctive sentence': [MESSAGE_SENTENCE],
    'the extracted memory': [EXTRACTED_MEMORY],
    'the written memory': [WRITTEN_MEMORY, club, clubTown],
    'the stored value': [String(DISTINCTIVE_RHR)],
    'a refused body’s word': refused,
    'the answer’s first sentence': [answerFirstSentence],
  };
  const leaks: string[] = [];
  for (const [what, needles] of Object.entries(content))
    for (const needle of needles)
      // As written, and as a JSON string holds it (a quote or a non-ASCII character escaped).
      for (const form of new Set([needle, JSON.stringify(needle).slice(1, -1)]))
        for (const [process, lines] of logs)
          for (const line of lines) if (line.includes(form)) leaks.push(`${process}: ${what} (${form}): ${line}`);
  expect(leaks).toEqual([]);
});
