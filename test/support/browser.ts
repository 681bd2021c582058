/**
 * A headless Chromium for suites that run code in a real browser: Debian's `chromium` package driven
 * by playwright-core (`npx playwright install` has no network to download its own build). A page sees
 * only what the suite serves it, and every error it reports is kept for the suite to assert on.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Where Chromium is: `CHROMIUM_PATH` if set, else Debian's `/usr/bin/chromium`. Throws how to install it if absent. */
function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  if (!existsSync(path)) {
    throw new Error(
      `Chromium is not installed at ${path}: install it with \`apt-get install -y chromium\` (as root; .ci/run does), ` +
        'or point CHROMIUM_PATH at a Chromium or Chrome executable.',
    );
  }
  return path;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** What went wrong in a page: uncaught exceptions, `console.error`s, and requests that failed at the network level. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.stack ?? err.message}`));
  page.on('console', (msg) => {
    const where = msg.location().url;
    if (msg.type() === 'error') errors.push(`console.error: ${msg.text()}${where ? ` (${where})` : ''}`);
  });
  page.on('requestfailed', (req) => {
    const why = req.failure()?.errorText;
    // `es.close()` after a terminal event is how the contract's clients stop watching: when it comes before the
    // server has ended the response, Chromium reports the stream's request as aborted. That is the page's own
    // choice, not a failure; a stream the server drops ends with another error and is still reported.
    if (req.resourceType() === 'eventsource' && why === 'net::ERR_ABORTED') return;
    errors.push(`requestfailed: ${req.method()} ${req.url()}: ${why}`);
  });
  return errors;
}
