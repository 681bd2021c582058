/**
 * Browsers on other origins (api/cors.ts): pages served by this suite on other ports of 127.0.0.1 (another
 * port is another origin) call the compiled API in headless Chromium.
 *
 * - The product contract's browser sample (Streaming, "Browser (EventSource)"), as the contract prints it but
 *   for the API's address, runs in the page and receives the turn's events, against an API left at its
 *   default (AMY_CORS_ALLOWED_ORIGINS unset).
 * - A `fetch` with `Authorization` (so a preflight first) creates turns and reads the headers the API exposes.
 * - An API with a list of origins grants the listed origin, and nothing to a page on another.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { STREAM_AGENTS } from '../../contracts/event-catalog';
import type { TurnEvent, TurnEventData } from '../../contracts/event-data';
import type { Turn } from '../../contracts/turn';
import { freePort } from '../../dev/stack/ports';
import { createEventLog } from '../../platform/event-log';
import { spawnApiProcess, type ApiProcess } from '../support/api-process';
import { collectPageErrors, launchChromium } from '../support/browser';
import { contractSamplePage, type ContractSamplePage } from '../support/contract-browser-sample';
import { startDemoService, type DemoService } from '../support/service';

jest.setTimeout(180_000);

let demo: DemoService;
let listApi: ApiProcess;
let browser: Browser;
/** Two origins of this suite's own, each serving the page for the API named in its query string. */
let pageServer: http.Server;
let otherPageServer: http.Server;
let origin: string;
let otherOrigin: string;

async function servePages(): Promise<{ server: http.Server; origin: string }> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/') return void res.writeHead(404).end();
    res
      .writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
      .end(contractSamplePage(url.searchParams.get('api')!));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

beforeAll(async () => {
  // Before the service: a missing Chromium fails at once, with how to install it.
  browser = await launchChromium();
  ({ server: pageServer, origin } = await servePages());
  ({ server: otherPageServer, origin: otherOrigin } = await servePages());
  demo = await startDemoService();
  // A second API on the same database and worker, granting the first origin only; one turn a minute per user,
  // so that a 429 with Retry-After is one request away.
  listApi = await spawnApiProcess({ ...demo.svc.config, AMY_MAX_TURNS_PER_MINUTE: 1 }, await freePort(), {
    env: { AMY_CORS_ALLOWED_ORIGINS: origin },
  });
});

afterAll(async () => {
  await browser?.close();
  await listApi?.kill();
  await demo?.close();
  await Promise.all([pageServer, otherPageServer].map((s) => s && new Promise((resolve) => s.close(resolve))));
});

/** A page on `pageOrigin` for the API at `apiBase`, and what went wrong in it. */
async function openPage(
  pageOrigin: string,
  apiBase: string,
): Promise<{ page: Page; errors: string[]; logs: string[] }> {
  const page = await browser.newPage();
  const errors = collectPageErrors(page);
  const logs: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'log') logs.push(msg.text());
  });
  await page.goto(`${pageOrigin}/?api=${encodeURIComponent(apiBase)}`);
  await page.waitForFunction(() => 'watchTurn' in globalThis, undefined, { timeout: 10_000 });
  return { page, errors, logs };
}

const createTurn = (page: Page, apiBase: string, apiKey: string, content: string, idempotencyKey: string) =>
  page.evaluate(
    ([url, key, text, idempotency]) =>
      (globalThis as unknown as ContractSamplePage).send(url, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': idempotency },
        body: JSON.stringify({ messages: [{ role: 'user', content: text }] }),
      }),
    [`${apiBase}/v1/turns`, apiKey, content, idempotencyKey] as const,
  );

/** Each agent's narration as the contract tells a client to build it: its deltas, in order. */
function narrationByAgent(events: TurnEvent[]): Record<string, string> {
  const text: Record<string, string> = Object.fromEntries(STREAM_AGENTS.map((agent) => [agent, '']));
  for (const event of events) {
    if (event.type !== 'agent.thought') continue;
    const { agent, delta } = event.data as TurnEventData<'agent.thought'>;
    text[agent] += delta;
  }
  return text;
}

describe('an API at its default, from a page on another origin', () => {
  test('a fetch with Authorization passes its preflight, and the page reads X-Request-Id and Idempotent-Replayed', async () => {
    const { page, errors } = await openPage(origin, demo.svc.url);
    const created = await createTurn(page, demo.svc.url, demo.user.apiKey, 'thanks!', 'cors-browser-1');
    const replayed = await createTurn(page, demo.svc.url, demo.user.apiKey, 'thanks!', 'cors-browser-1');
    expect(created).toEqual({
      status: 201,
      body: expect.objectContaining({ id: expect.stringMatching(/^turn_/) }),
      headers: expect.objectContaining({ 'x-request-id': expect.stringMatching(/^req_/), 'idempotent-replayed': null }),
    });
    expect(replayed).toEqual({
      status: 201,
      body: expect.objectContaining({ id: (created as { body: Turn }).body.id }),
      headers: expect.objectContaining({
        'x-request-id': expect.stringMatching(/^req_/),
        'idempotent-replayed': 'true',
      }),
    });
    expect(errors).toEqual([]);
    await page.close();
  });

  describe('the contract’s browser sample, on a turn of the user’s', () => {
    let page: Page;
    let errors: string[];
    let logs: string[];
    let turn: Turn;
    let ended: { ended: string };

    beforeAll(async () => {
      ({ page, errors, logs } = await openPage(origin, demo.svc.url));
      // Created outside the browser, so that the sample is all the page does.
      const created = await fetch(`${demo.svc.url}/v1/turns`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${demo.user.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          messages: [{ role: 'user', content: 'What is my average resting heart rate over the last 90 days?' }],
        }),
      });
      turn = (await created.json()) as Turn;
      ended = await page.evaluate(
        ([turnId, key]) => (globalThis as unknown as ContractSamplePage).watchTurn(turnId, key),
        [turn.id, demo.user.apiKey],
      );
    });
    afterAll(() => page?.close());

    test('receives the turn’s events: turn.started, every agent.thought, and turn.completed with the answer', async () => {
      expect(ended).toEqual({ ended: 'rendered' });
      const stored = await createEventLog(demo.pool).readAfter(turn.id, 0, 10_000);
      const completed = stored.find((event) => event.type === 'turn.completed');
      expect(completed).toBeDefined();
      const answer = await page.evaluate(
        () => (globalThis as unknown as ContractSamplePage).document.getElementById('answer')!.textContent,
      );
      expect(answer).toBe((completed!.data as { result: { answer: string } }).result.answer);

      const shown = await page.evaluate(
        (agents) =>
          Object.fromEntries(
            agents.map((agent) => [
              agent,
              (globalThis as unknown as ContractSamplePage).document.getElementById(agent)!.textContent,
            ]),
          ),
        [...STREAM_AGENTS],
      );
      const narration = narrationByAgent(stored);
      expect(narration.data_science).not.toBe('');
      expect(narration.synthesis).not.toBe('');
      expect(shown).toEqual(narration);

      // Chromium's console renders the object it was given without quotes.
      expect(logs).toEqual([`Started: {turn_id: ${turn.id}, at: ${stored[0].data.at}}`]);
      expect(errors).toEqual([]);
    });
  });
});

describe('an API with a list of origins', () => {
  test('grants a listed origin: a fetch with Authorization works, and a 429’s Retry-After is readable', async () => {
    const { page, errors } = await openPage(origin, listApi.url);
    const user = await demo.svc.createUser();
    const first = await createTurn(page, listApi.url, user.apiKey, 'thanks!', 'cors-list-1');
    const second = await createTurn(page, listApi.url, user.apiKey, 'thanks!', 'cors-list-2');
    expect(first).toMatchObject({ status: 201, headers: { 'x-request-id': expect.stringMatching(/^req_/) } });
    expect(second).toMatchObject({
      status: 429,
      body: { error: { code: 'rate_limited' } },
      headers: {
        'retry-after': expect.stringMatching(/^[1-9][0-9]*$/),
        'x-request-id': expect.stringMatching(/^req_/),
      },
    });
    const turnId = (first as { body: Turn }).body.id;
    await expect(
      page.evaluate(
        ([id, key]) => (globalThis as unknown as ContractSamplePage).watchTurn(id, key),
        [turnId, user.apiKey],
      ),
    ).resolves.toEqual({
      ended: 'rendered',
    });
    // Chromium reports every error status in the console; that one is the test's.
    expect(errors).toEqual([expect.stringMatching(/status of 429 .*\/v1\/turns/)]);
    await page.close();
  });

  test('grants nothing to another origin: its fetch fails at the preflight and its EventSource reads no event', async () => {
    const { page, errors, logs } = await openPage(otherOrigin, listApi.url);
    const refused = await createTurn(page, listApi.url, demo.user.apiKey, 'thanks!', 'cors-list-3');
    expect(refused).toEqual({ failed: expect.stringMatching(/TypeError: Failed to fetch/) });

    // A turn of the user's, created from outside the browser: the page has the key and the id, and still reads nothing.
    // (Through the API at its default: this one allows a user one turn a minute.)
    const created = await fetch(`${demo.svc.url}/v1/turns`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${demo.user.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'thanks!' }], stream: false }),
    });
    const turn = (await created.json()) as Turn;
    expect(turn.status).toBe('completed');
    const ended = await page.evaluate(
      ([id, key]) => (globalThis as unknown as ContractSamplePage).watchTurn(id, key),
      [turn.id, demo.user.apiKey],
    );
    expect(ended).toEqual({ ended: 'the browser closed the EventSource' });
    expect(logs).toEqual([]);
    const shown = await page.evaluate(
      () => (globalThis as unknown as ContractSamplePage).document.getElementById('synthesis')!.textContent,
    );
    expect(shown).toBe('');
    // What the browser said, twice: for the preflight, and for the event stream.
    expect(errors.filter((e) => e.includes('blocked by CORS policy'))).toHaveLength(2);
    await page.close();
  });
});
