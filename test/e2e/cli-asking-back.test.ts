/**
 * `amy ask` when Amy asks back, in a real pseudo-terminal (util-linux `script`): a vague question asks to confirm
 * the Investigator's scan, with its options numbered, the estimate, the default and the deadline; the test types
 * `1` and Enter, the answer is taken, and the turn completes. With --no-questions nothing is asked, as when `amy`
 * is not on a terminal.
 */
import { Amy } from '@amy/sdk';
import { createEventLog } from '../../platform/event-log';
import { startAmy } from '../support/cli/run-amy';
import { screenAfter } from '../support/cli/virtual-terminal';
import { startDemoService, type DemoService } from '../support/service';
import { AMY_BIN, ensureCliBuilt } from '../support/workspace-build';

jest.setTimeout(120_000);

const VAGUE = 'Is there anything in my numbers worth knowing?';

let demo: DemoService;
let env: Record<string, string>;
let amy: Amy;

beforeAll(async () => {
  ensureCliBuilt();
  demo = await startDemoService();
  env = { AMY_API_KEY: demo.user.apiKey, AMY_BASE_URL: demo.svc.url, NO_COLOR: '1', TERM: 'xterm-256color' };
  amy = new Amy({ apiKey: demo.user.apiKey, baseUrl: demo.svc.url });
}, 120_000);
afterAll(() => demo?.close());

/** `amy ask` with these arguments in a pseudo-terminal: stdin and stdout are a TTY. */
const askInTerminal = (args: string) =>
  startAmy([], {
    env,
    command: [
      'script',
      ['-q', '-e', '-c', `stty cols 120 rows 40; exec ${process.execPath} ${AMY_BIN} ask ${args}`, '/dev/null'],
    ],
  });

async function eventTypes(turnId: string) {
  return (await createEventLog(demo.pool).readAfter(turnId, 0, 10_000)).map((e) => e.type);
}

test('in a terminal the confirmation is asked; typing 1 and Enter answers it and the turn completes', async () => {
  const terminal = askInTerminal(`'${VAGUE}'`);
  await terminal.waitFor(/Choose 1-2 \(Enter for the default\): /);
  const asked = screenAfter(terminal.output().stdout).join('\n');
  expect(asked).toMatch(/^\? .+/m);
  expect(asked).toMatch(/^ {2}1\. Yes, look through all my data$/m);
  expect(asked).toMatch(/^ {2}2\. No, a quick answer is enough \(default\)$/m);
  expect(asked).toMatch(/^ {2}Estimate: about \$\d+\.\d\d and \d+ (s|min)\.$/m);
  expect(asked).toMatch(/Without an answer by .+, the turn goes on with "No, a quick answer is enough"\./);
  terminal.child.stdin!.write('1\r');
  const run = await terminal.exited;
  expect(run.code).toBe(0);
  const screen = screenAfter(run.stdout).join('\n');
  expect(screen).toContain('Answered "Yes, look through all my data": the turn goes on.');
  const [, turnId] = /● (turn_\w+) started/.exec(screen)!;
  const turn = await amy.turns.get(turnId);
  expect(turn.status).toBe('completed');
  expect(screen).toContain(turn.result!.answer.trim().split('\n')[0]);
  const types = await eventTypes(turnId);
  expect(types.filter((t) => t.startsWith('turn.input'))).toEqual(['turn.input_required', 'turn.input_received']);
  const log = await createEventLog(demo.pool).readAfter(turnId, 0, 10_000);
  expect(log.find((e) => e.type === 'turn.input_received')?.data).toMatchObject({ option_id: 'scan', source: 'user' });
});

test('with --no-questions nothing is asked: the turn never waits, as when amy is not on a terminal', async () => {
  const terminal = askInTerminal(`--no-questions '${VAGUE}'`);
  const run = await terminal.exited;
  expect(run.code).toBe(0);
  const screen = screenAfter(run.stdout).join('\n');
  expect(screen).not.toMatch(/Choose 1-/);
  const [, turnId] = /● (turn_\w+) started/.exec(screen)!;
  expect((await eventTypes(turnId)).some((t) => t.startsWith('turn.input'))).toBe(false);
});
