/**
 * A client written straight from the contract, against `npm start`'s stack: the product contract's own browser
 * sample (test/support/contract-browser-sample.ts), from a page on another origin in headless Chromium,
 * appending every `agent.thought` delta to its agent's element (`textContent += delta`).
 *
 * The stack runs from a copy of this checkout (dev/stack/main.ts, as `npm start` runs it on a fresh machine),
 * with its one documented override of the model, `ANTHROPIC_BASE_URL`, pointing at a scripted model process
 * that states a number in no reference in its first writing of every answer (`SCRIPTED_MODEL_UNTRACED_NUMBER=
 * first`), and whose first synthesis stream is cut halfway (a `stream_cut` fault). In that one turn, then, a
 * synthesis attempt fails mid-stream and is retried by Temporal, and the binding fact-check repairs the answer;
 * the page must end showing exactly `result.answer` in the synthesis channel, and never the number the check
 * rejected.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { turnSchema, type Turn } from '../../contracts/turn';
import { launch, lineIncludes, type LaunchedProcess } from '../../dev/stack/child-process';
import { freePort } from '../../dev/stack/ports';
import { collectPageErrors, launchChromium } from '../support/browser';
import { contractSamplePage, type ContractSamplePage } from '../support/contract-browser-sample';
import { api, expectSchema } from '../support/http';
import { openEventStream } from '../support/sse-client';
import { startingAStack } from '../support/stack-start-lock';
import { copyWorkingTree, FRESH_MACHINE_ENV } from '../support/working-tree-copy';

jest.setTimeout(420_000);

// A description over the demo data: Data Science, the gates, the Critic, then synthesis. The untraced sentence
// comes last in the scripted answer, so the cut (halfway through the first writing's stream) comes before the
// check can stop the writing there: the retried attempt writes on, is stopped at that sentence, and repairs.
const DATA_QUESTION = 'What is my average resting heart rate over the last 90 days?';

interface StackFile {
  api_url: string;
  demo_api_key: string;
  anthropic_base_url: string | null;
}

let browser: Browser;
let scripted: LaunchedProcess;
let scriptedUrl: string;
let stack: LaunchedProcess | null = null;
let workDir: string;
let written: StackFile;
let pageServer: http.Server;
let pageOrigin: string;

beforeAll(async () => {
  // Before the services: a missing Chromium fails at once, with how to install it.
  browser = await launchChromium();
  const port = await freePort();
  scripted = await launch({
    name: 'scripted model',
    entry: 'dev/scripted-model/main.ts',
    env: {
      SCRIPTED_MODEL_PORT: String(port),
      SCRIPTED_MODEL_UNTRACED_NUMBER: 'first',
      // A few words every 20 ms: the answer is still streaming when the cut comes.
      SCRIPTED_MODEL_CHUNK_DELAY_MS: '20',
    },
    ready: lineIncludes('scripted model listening'),
    timeoutMs: 60_000,
  });
  scriptedUrl = `http://127.0.0.1:${port}`;

  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-contract-client-'));
  // Enterable by the postgres user, as a checkout usually is, so the cluster stays in the copy's .data.
  fs.chmodSync(workDir, 0o755);
  const checkout = path.join(workDir, 'amy');
  copyWorkingTree(checkout);
  stack = await startingAStack(() =>
    launch({
      name: 'npm start',
      entry: path.join(checkout, 'dev', 'stack', 'main.ts'),
      cwd: checkout,
      env: { ...FRESH_MACHINE_ENV, ANTHROPIC_BASE_URL: scriptedUrl },
      ready: lineIncludes('Amy turn service is running'),
      timeoutMs: 240_000,
    }),
  );
  written = JSON.parse(fs.readFileSync(path.join(checkout, '.data', 'stack.json'), 'utf8')) as StackFile;
  expect(written.anthropic_base_url).toBe(scriptedUrl);

  // Another origin: a port of this suite's own, serving the page for the stack's API.
  pageServer = http.createServer((req, res) => {
    if (req.url !== '/') return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(contractSamplePage(written.api_url));
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
}, 420_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await scripted?.stop();
  if (pageServer) await new Promise((resolve) => pageServer.close(resolve));
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
}, 60_000);

const control = (method: string, route: string, body?: unknown) =>
  fetch(`${scriptedUrl}/_control/${route}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then((res) => res.json() as Promise<{ data?: unknown }>);

test("the contract's browser sample, on another origin, shows exactly result.answer after a cut stream and a fact-check repair, never the rejected number", async () => {
  await control('POST', 'faults', { kind: 'stream_cut', step: 'synthesis', times: 1 });
  const created = await api(written.api_url, 'POST', '/v1/turns', {
    key: written.demo_api_key,
    body: { messages: [{ role: 'user', content: DATA_QUESTION }] },
  });
  expect(created.status).toBe(201);
  const turnId = created.body.id as string;

  const page = await browser.newPage();
  const errors = collectPageErrors(page);
  await page.goto(`${pageOrigin}/`);
  const watched = await page.evaluate(([id, key]) => (globalThis as unknown as ContractSamplePage).watchTurn(id, key), [
    turnId,
    written.demo_api_key,
  ] as const);
  expect(watched).toEqual({ ended: 'rendered' });
  const shown = await page.evaluate(() => {
    const doc = (globalThis as unknown as ContractSamplePage).document;
    return {
      synthesis: doc.getElementById('synthesis')!.textContent,
      answer: doc.getElementById('answer')!.textContent,
    };
  });
  expect(errors).toEqual([]);

  const turn: Turn = expectSchema(
    turnSchema,
    (await api(written.api_url, 'GET', `/v1/turns/${turnId}`, { key: written.demo_api_key })).body,
  );
  expect(turn.status).toBe('completed');
  const result = turn.result!;
  // What the sample appended, delta by delta, is the answer the turn ended with.
  expect(shown.synthesis).toBe(result.answer);
  expect(shown.answer).toBe(result.answer);

  // The check rejected a number and the answer was repaired; the page never showed it. Deltas only append, so
  // what the element ends with holds everything it ever showed.
  const factCheck = result.fact_check!;
  expect(factCheck.repairs.resynthesised).toBe(true);
  expect(factCheck.issues.length).toBeGreaterThan(0);
  for (const { value } of factCheck.issues) {
    const asWritten = String(value).replace('.', '\\.');
    expect(shown.synthesis).not.toMatch(new RegExp(`(?<![\\d.])${asWritten}(?!\\d)`));
  }

  // And in the same turn a synthesis attempt was cut mid-stream, and Temporal ran the step again.
  expect((await control('GET', 'faults')).data).toEqual([]);
  const requests = (await control('GET', 'requests')).data as Array<{ step: string | null; fault: string | null }>;
  expect(requests.filter((r) => r.step === 'synthesis').map((r) => r.fault)).toContain('stream_cut');
  const events = openEventStream(`${written.api_url}/v1/turns/${turnId}/events`, { apiKey: written.demo_api_key });
  await events.closedByServer;
  const retries = events.events.filter((e) => e.type === 'step.retry').map((e) => e.data.step);
  expect(retries).toContain('synthesis');
});
