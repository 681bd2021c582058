/**
 * The Temporal Web UI, in Chromium, through the codec server (docs/operations.md#the-codec-server): a Temporal
 * dev server of the test's own, started as `npm start` starts it (`--ui-codec-endpoint` at the API's codec
 * server, on its listener of its own), shows a turn's input decoded, the user's message readable, once an
 * operator has signed in to the codec server and the UI's codec settings include credentials: the session
 * cookie (SameSite=Strict over plain http) goes with the UI's cross-origin decode requests because both are on
 * 127.0.0.1, one site whatever the ports. Before that, every decode the UI asks for is refused (401) and the
 * message is nowhere on the page; after signing out, refused again.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { startLocalTemporal, type LocalTemporal } from '../../dev/stack/local-temporal';
import { freePort } from '../../dev/stack/ports';
import { launchChromium } from '../support/browser';
import { api } from '../support/http';
import { startTestService, type TestService } from '../support/service';

jest.setTimeout(180_000);

const TOKEN = randomBytes(24).toString('hex');
const QUESTION = 'What was my longest run this year, for the pelican relay?';

let temporal: LocalTemporal;
let svc: TestService;
let browser: Browser;
let codec: string;

beforeAll(async () => {
  const codecPort = await freePort();
  codec = `http://127.0.0.1:${codecPort}/codec`;
  temporal = await startLocalTemporal({ uiCodecEndpoint: codec });
  const uiOrigin = new URL(temporal.uiUrl!).origin;
  svc = await startTestService({
    env: {
      TEMPORAL_ADDRESS: temporal.address,
      AMY_CODEC_PORT: String(codecPort),
      AMY_CODEC_OPERATORS: `ops-bob:${TOKEN}`,
      AMY_CODEC_ALLOWED_ORIGINS: uiOrigin,
    },
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await svc?.close();
  await temporal?.stop();
});

/** The turn's page in the Web UI, with the statuses of the decode requests it made. */
async function turnPage(page: Page, turnId: string): Promise<{ text: string; decodes: number[] }> {
  const decodes: number[] = [];
  page.on('response', (res) => {
    if (res.url().startsWith(`${codec}/decode`)) decodes.push(res.status());
  });
  const decoded = page.waitForResponse((res) => res.url().startsWith(`${codec}/decode`));
  await page.goto(`${temporal.uiUrl}/namespaces/default/workflows/${turnId}`);
  await decoded;
  // The page renders the decoded input once its requests are answered.
  await page.waitForLoadState('networkidle');
  return { text: (await page.textContent('body')) ?? '', decodes };
}

test("an operator signed in to the codec server reads a turn's input in the Web UI; before, nothing decodes", async () => {
  const user = await svc.createUser();
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: QUESTION }] },
  });
  const turnId: string = created.body.id;
  await svc.temporal.workflow.getHandle(turnId).result();

  const context = await browser.newContext();
  const page = await context.newPage();
  // The UI's own codec settings (kept in its local storage): the server's endpoint, with credentials.
  await page.goto(`${temporal.uiUrl}/namespaces/default/workflows`);
  await page.evaluate(
    `localStorage.setItem('endpoint', ${JSON.stringify(JSON.stringify(codec))});` +
      `localStorage.setItem('includeCredentials', 'true');` +
      `localStorage.setItem('overrideRemoteCodecConfiguration', 'true');`,
  );

  const before = await turnPage(page, turnId);
  expect(before.decodes.length).toBeGreaterThan(0);
  expect(new Set(before.decodes)).toEqual(new Set([401]));
  expect(before.text).not.toContain('pelican relay');

  await page.goto(`${codec}/login`);
  await page.fill('input[name=token]', TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('Signed in to the codec server as ops-bob.').waitFor();

  const after = await turnPage(await context.newPage(), turnId);
  expect(new Set(after.decodes)).toEqual(new Set([200]));
  expect(after.text).toContain(QUESTION);

  const signOut = await context.newPage();
  await signOut.goto(`${codec}/login`);
  await signOut.getByRole('button', { name: 'Sign out' }).click();
  await signOut.getByText('Signed out of the codec server.').waitFor();
  const signedOut = await turnPage(await context.newPage(), turnId);
  expect(new Set(signedOut.decodes)).toEqual(new Set([401]));
  expect(signedOut.text).not.toContain('pelican relay');
  await context.close();
});
