/**
 * `amy account delete`, the built CLI against the real service: without a terminal it refuses unless --yes
 * is given; on a terminal (a real pseudo-terminal) it asks for "delete", and any other answer deletes
 * nothing; once confirmed it prints what was erased and what is kept, and the key stops working.
 */
import { Amy, AuthenticationError } from '@amy/sdk';
import { AMY_BIN, ensureCliBuilt } from '../support/workspace-build';
import { runAmy, startAmy } from '../support/cli/run-amy';
import { startTestService, type TestService } from '../support/service';

jest.setTimeout(90_000);

let svc: TestService;

beforeAll(async () => {
  ensureCliBuilt();
  svc = await startTestService();
}, 120_000);
afterAll(() => svc?.close());

/** `amy account delete` on a pseudo-terminal, answering the confirmation with `answer`. */
async function onTerminal(env: Record<string, string>, answer: string) {
  const command = `exec ${process.execPath} ${AMY_BIN} account delete`;
  const terminal = startAmy([], { env, command: ['script', ['-q', '-e', '-c', command, '/dev/null']] });
  await terminal.waitFor(/Type "delete" to confirm: /);
  terminal.child.stdin!.write(`${answer}\n`);
  return terminal.exited;
}

test('refused without a terminal unless --yes; a wrong answer deletes nothing; "delete" deletes the account', async () => {
  const user = await svc.createUser();
  const env = { AMY_API_KEY: user.apiKey, AMY_BASE_URL: svc.url };
  const amy = new Amy({ apiKey: user.apiKey, baseUrl: svc.url, maxRetries: 0 });
  await amy.memory.create({ text: 'Swims on Tuesdays.', category: 'history' });

  const piped = await runAmy(['account', 'delete'], { env });
  expect(piped).toMatchObject({ code: 2, stderr: expect.stringContaining('pass --yes') });

  const declined = await onTerminal(env, 'yes');
  expect(declined.code).toBe(1);
  expect(declined.stdout).toContain('Nothing was deleted.');
  expect((await amy.memory.list()).data).toHaveLength(1);

  const confirmed = await onTerminal(env, 'delete');
  expect(confirmed.code).toBe(0);
  expect(confirmed.stdout).toMatch(/Your account was deleted at \S+\. Erased:/);
  expect(confirmed.stdout).toContain('memory entries: 1');
  expect(confirmed.stdout).toContain('Kept:');
  await expect(amy.memory.list().then((page) => page)).rejects.toBeInstanceOf(AuthenticationError);
});

test('--yes deletes without asking', async () => {
  const user = await svc.createUser();
  const run = await runAmy(['account', 'delete', '--yes'], {
    env: { AMY_API_KEY: user.apiKey, AMY_BASE_URL: svc.url },
  });
  expect(run).toMatchObject({ code: 0, stdout: expect.stringContaining('api keys: 1') });
});
