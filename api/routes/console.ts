/**
 * The web console: one static page and its ES modules (console/), plus the SDK's browser bundle it
 * runs on, served from the API's own origin so the SDK's requests are same-origin and need no CORS.
 *
 *   GET /console                the page (text/html, with the Content-Security-Policy below)
 *   GET /console/<name>.js|css  the console's own modules and style sheet
 *   GET /console/amy-sdk.js     sdk/dist/index.js, read on each request (so a rebuild needs no restart);
 *                               503 service_unavailable in the error envelope while it is not built
 *   GET /console/vendor/uPlot.esm.js|uPlot.min.css
 *                               the charting library the findings' charts are drawn with, from
 *                               node_modules/uplot/dist (a dependency of this package), read once;
 *                               503 while it is not installed
 *
 * None of them needs a key: the page carries no secret; the user types the key into it, and the SDK
 * sends it as `Authorization` on API requests only. These routes are not in /openapi.json, which
 * describes the API for its clients, not the files of a web page.
 *
 * The policy allows scripts, styles and connections from this origin only, and nothing inline: text
 * from the model or the user that slipped into the DOM as markup could still not run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Router, type Response } from 'express';
import { PROJECT_ROOT } from '../../platform/project-root';
import { ApiError } from '../errors';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const CONSOLE_DIR = path.join(PROJECT_ROOT, 'console');
const SDK_BUNDLE_PATH = path.join(PROJECT_ROOT, 'sdk', 'dist', 'index.js');
/** Where npm installed uPlot's dist/ (null when it is not installed: its files are then a 503). */
function uPlotDist(): string | null {
  try {
    return path.dirname(require.resolve('uplot/dist/uPlot.esm.js'));
  } catch {
    return null;
  }
}
/** The files of uPlot the console loads: its ES module and its style sheet, nothing else from node_modules. */
const VENDOR_FILES = ['uPlot.esm.js', 'uPlot.min.css'];

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

interface Asset {
  body: Buffer;
  contentType: string;
}

/** The console's files, read once: they ship with the code, which a restart replaces anyway. */
function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(dir)) {
    const contentType = CONTENT_TYPES[path.extname(name)];
    if (contentType) assets.set(name, { body: readFileSync(path.join(dir, name)), contentType });
  }
  return assets;
}

function send(res: Response, { body, contentType }: Asset) {
  res.set({
    'Content-Type': contentType,
    'X-Content-Type-Options': 'nosniff',
    // Unversioned file names: the browser asks again each time rather than run an old console on a new API.
    'Cache-Control': 'no-cache',
  });
  res.send(body);
}

export function consoleRoutes({
  consoleDir = CONSOLE_DIR,
  sdkBundlePath = SDK_BUNDLE_PATH,
  vendorDir = uPlotDist(),
}: { consoleDir?: string; sdkBundlePath?: string; vendorDir?: string | null } = {}): Router {
  const assets = loadAssets(consoleDir);
  const page = assets.get('index.html');
  if (!page) throw new Error(`the console's index.html is missing from ${consoleDir}`);
  assets.delete('index.html');
  const router = Router();

  router.get('/console', (_req, res) => {
    res.set('Content-Security-Policy', CONSOLE_CSP);
    send(res, page);
  });

  router.get('/console/amy-sdk.js', async (_req, res) => {
    let body: Buffer;
    try {
      body = await readFile(sdkBundlePath);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      throw new ApiError(
        'service_unavailable',
        'The console needs the SDK bundle (sdk/dist/index.js), which is not built: run `npm install` (or `npm run build --workspace @amy/sdk`).',
      );
    }
    send(res, { body, contentType: CONTENT_TYPES['.js'] });
  });

  const vendor = new Map<string, Promise<Asset>>();
  const uPlotMissing = () =>
    new ApiError(
      'service_unavailable',
      'The console draws its charts with uPlot (node_modules/uplot), which is not installed: run `npm install`.',
    );
  router.get('/console/vendor/:file', async (req, res, next) => {
    const name = String(req.params.file);
    if (!VENDOR_FILES.includes(name)) return next();
    if (!vendorDir) throw uPlotMissing();
    let asset = vendor.get(name);
    if (!asset) {
      asset = readFile(path.join(vendorDir, name)).then((body) => ({
        body,
        contentType: CONTENT_TYPES[path.extname(name)],
      }));
      vendor.set(name, asset);
      // A failed read is not kept: the next request tries again.
      asset.catch(() => vendor.delete(name));
    }
    try {
      send(res, await asset);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      throw uPlotMissing();
    }
  });

  router.get('/console/:asset', (req, res, next) => {
    const asset = assets.get(String(req.params.asset));
    if (asset) send(res, asset);
    else next();
  });

  return router;
}
