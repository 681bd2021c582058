/**
 * `@amy/sdk` as a browser runs it: the built bundle (sdk/dist/index.js, unmodified) loaded by a
 * `<script type="module">` in headless Chromium, creating real turns on the real service and reading
 * their events over `fetch` streaming. The page is served from the API's own origin by intercepting
 * two paths under it (`page.route`), so the SDK's requests are same-origin and the API needs no CORS;
 * every other request goes to the API. What the page saw is compared with the turn's stored event log.
 */
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import type { TurnEvent } from '../../contracts/event-data';
import type { TurnResult } from '../../contracts/turn';
import { createEventLog } from '../../platform/event-log';
import { collectPageErrors, launchChromium } from '../support/browser';
import { ensureSdkBuilt } from '../support/workspace-build';
import { startDemoService, type DemoService } from '../support/service';

jest.setTimeout(180_000);

/**
 * The page: `askAmy(apiKey, content)` creates a turn and reads its stream to the end. Events are also
 * kept in `window.__sdkEvents` as they arrive, so a stream that never ends can still be reported.
 */
const PAGE_HTML = `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>@amy/sdk in a browser</title>
    <link rel="icon" href="data:," />
  </head>
  <body>
    <script type="module">
      import { Amy } from './amy-sdk.js';

      window.__sdkEvents = [];
      window.askAmy = async (apiKey, content) => {
        const amy = new Amy({ apiKey, baseUrl: location.origin });
        const events = (window.__sdkEvents = []);
        const turn = await amy.turns.create({ messages: [{ role: 'user', content }] });
        const stream = amy.turns.stream(turn.id);
        try {
          for await (const event of stream) events.push(event);
          const result = await stream.finalResult();
          return { turnId: turn.id, events, synthesis: stream.text('synthesis'), result };
        } catch (err) {
          const last = JSON.stringify(events[events.length - 1] ?? null);
          throw new Error(\`\${err.name}: \${err.message} (after \${events.length} events; last \${last})\`);
        }
      };
    </script>
  </body>
</html>
`;

type StreamedEvent = { id: number; type: string } & Record<string, unknown>;

interface BrowserTurn {
  turnId: string;
  events: StreamedEvent[];
  synthesis: string;
  result: TurnResult;
}

/** What the page's globals look like from a `page.evaluate` callback (this project compiles without the DOM lib). */
interface SdkPage {
  askAmy(apiKey: string, content: string): Promise<BrowserTurn>;
  __sdkEvents: StreamedEvent[];
}

let demo: DemoService;
let browser: Browser;
let page: Page;
let pageErrors: string[];
let bundle: string;

beforeAll(async () => {
  bundle = readFileSync(ensureSdkBuilt(), 'utf8');
  // Before the service: a missing Chromium fails at once, with how to install it.
  browser = await launchChromium();
  demo = await startDemoService();

  page = await browser.newPage();
  pageErrors = collectPageErrors(page);
  const origin = demo.svc.url;
  await page.route(`${origin}/__sdk-test/**`, (route) => {
    const { pathname } = new URL(route.request().url());
    if (pathname === '/__sdk-test/index.html') {
      return route.fulfill({ contentType: 'text/html; charset=utf-8', body: PAGE_HTML });
    }
    if (pathname === '/__sdk-test/amy-sdk.js') {
      return route.fulfill({ contentType: 'text/javascript; charset=utf-8', body: bundle });
    }
    return route.fulfill({ status: 404, contentType: 'text/plain', body: `the test serves no ${pathname}` });
  });
  await page.goto(`${origin}/__sdk-test/index.html`);
  await page.waitForFunction(() => 'askAmy' in globalThis, undefined, { timeout: 10_000 });
});

afterAll(async () => {
  await browser?.close();
  await demo?.close();
});

/** Runs `askAmy` in the page; a turn whose stream has not ended in `timeoutMs` fails with what the page had seen. */
async function askInBrowser(content: string, timeoutMs: number): Promise<BrowserTurn> {
  const asked = page.evaluate(([apiKey, text]) => (globalThis as unknown as SdkPage).askAmy(apiKey, text), [
    demo.user.apiKey,
    content,
  ] as const);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(async () => {
      const seen = await page.evaluate(() => (globalThis as unknown as SdkPage).__sdkEvents).catch(() => []);
      const tail = seen.slice(-3).map((e) => `${e.id} ${e.type}`);
      reject(new Error(`the page's stream had not ended after ${timeoutMs} ms: ${seen.length} events, last ${tail}`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([asked, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Everything a browser client is promised, checked against the turn's log in Postgres. */
async function expectFaithfulStream(run: BrowserTurn) {
  const ids = run.events.map((e) => e.id);
  expect(ids).toEqual(ids.map((_, i) => i + 1));

  const last = run.events[run.events.length - 1];
  expect(last.type).toBe('turn.completed');
  expect(last.result).toEqual(run.result);

  // The SDK yields `{ ...data, id, type }`: split each event back into the log's shape.
  const stored: TurnEvent[] = await createEventLog(demo.pool).readAfter(run.turnId, 0, 10_000);
  expect(run.events.map(({ id, type, ...data }) => ({ id, type, data }))).toEqual(stored);

  expect(run.result.answer.length).toBeGreaterThan(0);
  expect(run.synthesis).toBe(run.result.answer);
  expect(pageErrors).toEqual([]);
}

test('the bundle is self-contained: no import or require of anything', () => {
  const imports = bundle
    .split('\n')
    .filter((line) => /^\s*import[\s{*'"]|\bimport\s*\(|\brequire\s*\(|^\s*export\b.*\bfrom\s*['"]/.test(line));
  expect(imports).toEqual([]);
});

describe('a fallback turn ("thanks!")', () => {
  let run: BrowserTurn;
  beforeAll(async () => {
    run = await askInBrowser('thanks!', 60_000);
  });

  test('streams every stored event once, in order, ending with turn.completed, and the answer as synthesis text', () =>
    expectFaithfulStream(run));
});

describe('a question about the user’s own data (the full pipeline)', () => {
  let run: BrowserTurn;
  beforeAll(async () => {
    run = await askInBrowser('What is my average resting heart rate over the last 90 days?', 150_000);
  });

  test('streams every stored event once, in order, ending with turn.completed, and the answer as synthesis text', () =>
    expectFaithfulStream(run));

  test('the stream carried the pipeline’s work, not only its end', () => {
    const types = new Set(run.events.map((e) => e.type));
    expect([...types]).toEqual(expect.arrayContaining(['turn.started', 'agent.started', 'agent.thought']));
    expect(run.result.agents_used).toEqual(['data_science']);
  });
});

test('the page reported no errors', () => {
  expect(pageErrors).toEqual([]);
});
