/**
 * The receiver of docs/webhooks.md ("A receiver"), as the page shows it: type-checked as a consumer of the built
 * `@amy/sdk` would compile it, then run (through tsx) against the service, receiving the webhook of a turn that
 * ends, verifying it, and fetching the turn with the SDK. A request with a forged signature is refused.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { launch, lineIncludes, type LaunchedProcess } from '../../dev/stack/child-process';
import { runCli } from '../support/cli';
import { api } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { ensureSdkBuilt, REPO_ROOT } from '../support/workspace-build';

let svc: TestService;
let dir: string;
let receiver: LaunchedProcess | null = null;
const lines: string[] = [];

beforeAll(async () => {
  ensureSdkBuilt();
  svc = await startTestService({ env: { AMY_WEBHOOKS_ALLOW_PRIVATE: '1' } });
  // Inside node_modules, so '@amy/sdk' resolves as it does for a dependent project.
  dir = fs.mkdtempSync(path.join(REPO_ROOT, 'node_modules', '.amy-webhook-receiver-'));
}, 120_000);
afterAll(async () => {
  await receiver?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  await svc?.close();
});

/** The one TypeScript block under the page's "### A receiver". */
function receiverExample(): string {
  const page = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'webhooks.md'), 'utf8');
  const start = page.indexOf('\n### A receiver\n');
  const rest = page.slice(start + 1);
  const section = rest.slice(0, rest.slice(1).search(/\n#{1,3} /) + 1);
  const blocks = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
  expect(blocks).toHaveLength(1);
  return blocks[0];
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("the page's receiver verifies a turn's webhook and fetches the turn with the SDK", async () => {
  const file = path.join(dir, 'receiver.mts');
  fs.writeFileSync(file, receiverExample());
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
      },
      files: ['receiver.mts'],
    }),
  );
  const tsc = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], {
    encoding: 'utf8',
  });
  expect(tsc.stdout + tsc.stderr).toBe('');

  const user = await svc.createUser();
  const port = await freePort();
  const added = await runCli(
    'scripts/webhooks.ts',
    ['add', '--url', `http://127.0.0.1:${port}/amy-webhooks`, '--events', 'turn.completed,turn.failed'],
    { DATABASE_URL: svc.database.url, AMY_WEBHOOKS_ALLOW_PRIVATE: '1' },
  );
  expect(added.code).toBe(0);
  const secret = added.stdout.trim().split('\n').at(-1)!;

  receiver = await launch({
    name: 'the example receiver',
    entry: file,
    cwd: REPO_ROOT,
    env: { AMY_WEBHOOK_SECRET: secret, AMY_API_KEY: user.apiKey, AMY_BASE_URL: svc.url, PORT: String(port) },
    ready: lineIncludes('receiver listening'),
    onLine: (line) => lines.push(line),
  });

  const forged = await fetch(`http://127.0.0.1:${port}/amy-webhooks`, {
    method: 'POST',
    headers: {
      'webhook-id': 'msg_forged',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
    },
    body: '{"type":"turn.completed"}',
  });
  expect(forged.status).toBe(400);

  const turn = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: 'thanks!' }], stream: false },
  });
  expect(turn.body.status).toBe('completed');
  while (!lines.includes(`${turn.body.id} completed`)) await new Promise((resolve) => setTimeout(resolve, 100));
  expect(lines.filter((line) => line.startsWith('turn_'))).toEqual([`${turn.body.id} completed`]);
}, 120_000);
