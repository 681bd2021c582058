/**
 * The web console answering a turn's question (docs/api.md#asking-back) in headless Chromium against the whole
 * service: the console asks with `interaction`, so a vague question stops for a confirmation before the
 * Investigator's scan; the question shows with its estimate, its deadline and its options as buttons; a click posts
 * the answer with the page's key, and the turn goes on to its answer; the answered question says what was chosen.
 * A turn opened while it waits shows its pending question, an answer the API refuses shows the API’s message, and
 * a question left unanswered says the turn went on with the default.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createEventLog } from '../../platform/event-log';
import { inputRequestSchema, type InputRequest } from '../../contracts/interaction';
import { turnSchema, type Turn } from '../../contracts/turn';
import { collectPageErrors, launchChromium } from '../support/browser';
import { api, expectSchema } from '../support/http';
import { ensureSdkBuilt } from '../support/workspace-build';
import { startDemoService, type DemoService } from '../support/service';

jest.setTimeout(300_000);

const VAGUE = 'Is there anything in my numbers worth knowing?';
const SCAN_LABEL = 'Yes, look through all my data';
const QUICK_LABEL = 'No, a quick answer is enough';
const TURN_TIMEOUT_MS = 150_000;

let demo: DemoService;
let browser: Browser;
let key: string;

beforeAll(async () => {
  ensureSdkBuilt();
  browser = await launchChromium();
  demo = await startDemoService();
  key = demo.user.apiKey;
});

afterAll(async () => {
  await browser?.close();
  await demo?.close();
});

interface ConsolePage {
  context: BrowserContext;
  page: Page;
  errors: string[];
}

async function openConsole(fragment = ''): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = collectPageErrors(page);
  await page.goto(`${demo.svc.url}/console${fragment}`);
  await page.locator('#key-panel').waitFor();
  await page.fill('#api-key', key);
  await page.click('#key-form button[type=submit]');
  await page.locator('#workspace').waitFor();
  return { context, page, errors };
}

async function storedTurn(turnId: string): Promise<Turn> {
  return expectSchema(turnSchema, (await api(demo.svc.url, 'GET', `/v1/turns/${turnId}`, { key })).body);
}

/** The turn's question, once it waits on it. */
async function pendingInput(turnId: string): Promise<InputRequest> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const turn = await storedTurn(turnId);
    if (turn.status === 'waiting_for_input' && turn.pending_input) return turn.pending_input;
    if (Date.now() > deadline) throw new Error(`${turnId} never waited for input (status ${turn.status})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function inputEvents(turnId: string) {
  const events = await createEventLog(demo.pool).readAfter(turnId, 0, 10_000);
  return events.filter((e) => e.type.startsWith('turn.input')).map((e) => ({ type: e.type, data: e.data }));
}

/** Chromium's reports of requests it cut itself (a stream the page stopped watching). */
const isAbortedRequest = (error: string) => /^requestfailed: .* net::ERR_ABORTED$/.test(error);

describe('a vague question asked in the console', () => {
  let session: ConsolePage;
  let turnId: string;
  let request: InputRequest;
  let createBody: Record<string, unknown>;
  let answerPost: { body: unknown; authorization: string | undefined };

  beforeAll(async () => {
    session = await openConsole();
    const { page } = session;
    const created = page.waitForRequest(
      (req) => req.method() === 'POST' && new URL(req.url()).pathname === '/v1/turns',
    );
    await page.fill('#question', VAGUE);
    await page.press('#question', 'Enter');
    createBody = (await created).postDataJSON() as Record<string, unknown>;
    await page.waitForURL(/#turn=turn_/);
    turnId = new URL(page.url()).hash.replace('#turn=', '');
    request = await pendingInput(turnId);
  });
  afterAll(() => session?.context.close());

  test('the console asks as a client that answers confirmations and clarifications', () => {
    expect(createBody).toMatchObject({
      messages: [{ role: 'user', content: VAGUE }],
      interaction: { accepts: ['confirmation', 'clarification'] },
    });
  });

  test('the question appears with its estimate, its deadline and its two options', async () => {
    const { page } = session;
    const item = page.locator(`#questions .input-request[data-request-id="${request.request_id}"]`);
    await item.waitFor({ timeout: 30_000 });
    expect(await page.locator('#questions-section').isVisible()).toBe(true);
    expect(await item.getAttribute('data-state')).toBe('waiting');
    expect(await item.getAttribute('data-kind')).toBe('confirmation');
    expect(await item.locator('.input-question').textContent()).toBe(request.question);
    const options = item.locator('button.input-option');
    expect(await options.allTextContents()).toEqual([SCAN_LABEL, QUICK_LABEL]);
    expect(await options.evaluateAll((buttons) => buttons.map((b) => b.getAttribute('data-option-id')))).toEqual([
      'scan',
      'quick',
    ]);
    expect(await item.locator('.input-text').count()).toBe(0);
    expect(request.estimate).toBeDefined();
    expect(await item.locator('.input-estimate').textContent()).toBe(
      `Estimate: about $${request.estimate!.cost_usd.toFixed(4)} and ${request.estimate!.duration_seconds.toFixed(1)} s.`,
    );
    const expiry = item.locator('.input-expiry');
    expect(await expiry.locator('time').getAttribute('datetime')).toBe(request.expires_at);
    expect(await expiry.textContent()).toContain(`the turn goes on with “${QUICK_LABEL}”`);
    expect(await page.locator('#turn-status').textContent()).toBe('waiting_for_input');
  });

  test('clicking “Yes” posts the answer with the page’s key; the turn goes on to its answer', async () => {
    const { page } = session;
    const item = page.locator(`#questions .input-request[data-request-id="${request.request_id}"]`);
    const posted = page.waitForRequest((req) => new URL(req.url()).pathname === `/v1/turns/${turnId}/input`);
    const answered = page.waitForResponse((res) => new URL(res.url()).pathname === `/v1/turns/${turnId}/input`);
    await item.getByRole('button', { name: SCAN_LABEL }).click();
    const req = await posted;
    answerPost = { body: req.postDataJSON(), authorization: req.headers().authorization };
    expect(answerPost).toEqual({
      body: { request_id: request.request_id, option_id: 'scan' },
      authorization: `Bearer ${key}`,
    });
    expect((await answered).status()).toBe(200);
    // No second answer: every option is disabled once one is sent.
    expect(await item.locator('button.input-option:enabled').count()).toBe(0);

    await page.locator(`#turn[data-turn-id="${turnId}"][data-answered="true"]`).waitFor({ timeout: TURN_TIMEOUT_MS });
    await demo.svc.temporal.workflow.getHandle(turnId).result();
    const turn = await storedTurn(turnId);
    expect(turn.status).toBe('completed');
    expect(await page.locator('#answer').textContent()).toBe(turn.result!.answer);
    expect(await inputEvents(turnId)).toEqual([
      { type: 'turn.input_required', data: expect.objectContaining({ request_id: request.request_id }) },
      {
        type: 'turn.input_received',
        data: expect.objectContaining({ request_id: request.request_id, option_id: 'scan', source: 'user' }),
      },
    ]);
    // The scan went ahead, as chosen.
    expect(await page.locator('.agent[data-agent="investigator"]').count()).toBe(1);
  });

  test('the answered question says what was chosen, and takes no other answer', async () => {
    const { page, errors } = session;
    const item = page.locator(`#questions .input-request[data-request-id="${request.request_id}"]`);
    expect(await item.getAttribute('data-state')).toBe('answered');
    expect(await item.locator('.input-outcome').textContent()).toBe(`You chose “${SCAN_LABEL}”.`);
    expect(await item.locator('button.chosen').allTextContents()).toEqual([SCAN_LABEL]);
    expect(await item.locator('button.input-option:enabled').count()).toBe(0);
    expect(await item.locator('.input-error').textContent()).toBe('');
    expect(errors.filter((e) => !isAbortedRequest(e))).toEqual([]);
  });
});

describe('a turn opened while it waits', () => {
  let session: ConsolePage;
  let turnId: string;
  let request: InputRequest;

  beforeAll(async () => {
    const created = await api(demo.svc.url, 'POST', '/v1/turns', {
      key,
      body: { messages: [{ role: 'user', content: VAGUE }], interaction: { accepts: ['confirmation'] } },
    });
    expect(created.status).toBe(201);
    turnId = created.body.id as string;
    request = expectSchema(inputRequestSchema, await pendingInput(turnId));
    session = await openConsole(`#turn=${turnId}`);
  });
  afterAll(() => session?.context.close());

  test('shows the pending question; an answer refused (another client answered first) shows the API’s message', async () => {
    const { page, errors } = session;
    const item = page.locator(`#questions .input-request[data-request-id="${request.request_id}"]`);
    await item.waitFor({ timeout: 30_000 });
    expect(await item.getAttribute('data-state')).toBe('waiting');
    expect(await item.locator('.input-question').textContent()).toBe(request.question);
    expect(await page.locator('#turn-status').textContent()).toBe('waiting_for_input');

    // Another client answers "No" just before the page's "Yes" reaches the API.
    await page.route(`**/v1/turns/${turnId}/input`, async (route) => {
      const other = await api(demo.svc.url, 'POST', `/v1/turns/${turnId}/input`, {
        key,
        body: { request_id: request.request_id, option_id: 'quick' },
      });
      expect(other.status).toBe(200);
      await route.continue();
    });
    const refused = page.waitForResponse((res) => new URL(res.url()).pathname === `/v1/turns/${turnId}/input`);
    await item.getByRole('button', { name: SCAN_LABEL }).click();
    expect((await refused).status()).toBe(409);
    await page.locator('#questions .input-error:not(:empty)').waitFor();
    expect(await item.locator('.input-error').textContent()).toBe('This request has already been answered.');

    await item.locator('.input-outcome:not(:empty)').waitFor({ timeout: 30_000 });
    expect(await item.getAttribute('data-state')).toBe('answered');
    expect(await item.locator('.input-outcome').textContent()).toBe(`You chose “${QUICK_LABEL}”.`);
    expect(await item.locator('button.chosen').allTextContents()).toEqual([QUICK_LABEL]);
    expect(await item.locator('button.input-option:enabled').count()).toBe(0);

    await page.locator(`#turn[data-turn-id="${turnId}"][data-answered="true"]`).waitFor({ timeout: TURN_TIMEOUT_MS });
    // The 409 is the API's answer, which the page shows; nothing else went wrong.
    expect(errors.filter((e) => !isAbortedRequest(e) && !/status of 409/.test(e))).toEqual([]);
  });
});

describe('a question left unanswered', () => {
  let session: ConsolePage;
  let turnId: string;

  beforeAll(async () => {
    const created = await api(demo.svc.url, 'POST', '/v1/turns', {
      key,
      body: {
        messages: [{ role: 'user', content: VAGUE }],
        interaction: { accepts: ['confirmation'], timeout_seconds: 10 },
      },
    });
    expect(created.status).toBe(201);
    turnId = created.body.id as string;
    await pendingInput(turnId);
    session = await openConsole(`#turn=${turnId}`);
  });
  afterAll(() => session?.context.close());

  test('says at the deadline that the turn went on with the default', async () => {
    const { page, errors } = session;
    const item = page.locator('#questions .input-request');
    await item.waitFor({ timeout: 30_000 });
    await page.locator('#questions .input-request[data-state="expired"]').waitFor({ timeout: 60_000 });
    expect(await item.locator('.input-outcome').textContent()).toBe(`No answer: went on with “${QUICK_LABEL}”.`);
    expect(await item.locator('button.chosen').count()).toBe(0);
    expect(await item.locator('button.input-option:enabled').count()).toBe(0);
    await page.locator(`#turn[data-turn-id="${turnId}"][data-answered="true"]`).waitFor({ timeout: TURN_TIMEOUT_MS });
    expect(errors.filter((e) => !isAbortedRequest(e))).toEqual([]);
  });
});
