/**
 * `npm start` on a host without bubblewrap says so at start-up, with the fix (issue 16, item 10).
 * The check is the real one: bwrap run on this host, or AMY_BWRAP_PATH pointing at a missing file.
 */
import { sandboxWarning, warnIfNoSandbox } from '../../dev/stack/sandbox-warning';
import { checkBwrap } from '../../platform/sandbox/bwrap';

test('without bubblewrap: a loud warning that data questions cannot run, naming apt-get install bubblewrap', async () => {
  const printed: string[] = [];
  const error = jest.spyOn(console, 'error').mockImplementation((text: string) => void printed.push(text));
  try {
    expect(await warnIfNoSandbox({ ...process.env, AMY_BWRAP_PATH: '/nonexistent/bwrap' })).toBe(false);
  } finally {
    error.mockRestore();
  }
  expect(printed.join('\n')).toMatch(/DATA QUESTIONS CANNOT RUN/);
  expect(printed.join('\n')).toContain('apt-get install bubblewrap');
  expect(printed.join('\n')).toContain('/nonexistent/bwrap');
});

test('bubblewrap missing from PATH is found missing too', async () => {
  expect(await checkBwrap({ PATH: '/nonexistent' })).toMatchObject({ ok: false, reason: 'not_installed' });
});

test('with bubblewrap that runs here: no warning', async () => {
  const check = await checkBwrap(process.env);
  expect(check).toMatchObject({ ok: true });
  expect(sandboxWarning(check)).toBeNull();
});
