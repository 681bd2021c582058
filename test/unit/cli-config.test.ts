/**
 * Where `amy` sends its key: the trust rules for `.data/stack.json` as a function of the file's and its
 * directory's `lstat` (ownership cannot be varied for real when the suite runs as root), the URL check,
 * and resolveConfig on real files in a temporary directory. The CLI end to end, with a listener that
 * must get no request, is in test/e2e/cli-e2e.test.ts ("configuration").
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { apiUrlProblem, resolveConfig } from '../../cli/src/config';
import { stackFileProblem, type OwnershipStat } from '../../cli/src/stack-file';

const ME = 1000;

function stat(kind: 'file' | 'dir' | 'link', mode: number, uid = ME): OwnershipStat {
  return {
    mode: (kind === 'dir' ? 0o040000 : kind === 'link' ? 0o120000 : 0o100000) | mode,
    uid,
    isFile: () => kind === 'file',
    isDirectory: () => kind === 'dir',
    isSymbolicLink: () => kind === 'link',
  };
}

describe('stackFileProblem', () => {
  test('the user’s own file, in the user’s own directory, writable only by the user: trusted', () => {
    expect(stackFileProblem({ file: stat('file', 0o644), dir: stat('dir', 0o755) }, ME)).toBeNull();
    expect(stackFileProblem({ file: stat('file', 0o600), dir: stat('dir', 0o700) }, ME)).toBeNull();
  });

  test('a file or directory of another user is not trusted, whatever its mode', () => {
    expect(stackFileProblem({ file: stat('file', 0o600, 1001), dir: stat('dir', 0o755) }, ME)).toMatch(
      /^it belongs to another user \(uid 1001, you are 1000\)$/,
    );
    expect(stackFileProblem({ file: stat('file', 0o600), dir: stat('dir', 0o755, 0) }, ME)).toMatch(
      /^its \.data directory belongs to another user \(uid 0/,
    );
    // Root is no exception: a root shell must not trust a file some user planted.
    expect(stackFileProblem({ file: stat('file', 0o644, 1001), dir: stat('dir', 0o755) }, 0)).toMatch(
      /belongs to another user/,
    );
  });

  test('group- or world-writable file or directory: not trusted, with the mode and the fix', () => {
    expect(stackFileProblem({ file: stat('file', 0o666), dir: stat('dir', 0o755) }, ME)).toBe(
      'other users can write it (mode 0666; `chmod go-w` fixes that)',
    );
    expect(stackFileProblem({ file: stat('file', 0o664), dir: stat('dir', 0o755) }, ME)).toMatch(/mode 0664/);
    expect(stackFileProblem({ file: stat('file', 0o644), dir: stat('dir', 0o777) }, ME)).toMatch(
      /^other users can write its \.data directory \(mode 0777/,
    );
    expect(stackFileProblem({ file: stat('file', 0o644), dir: stat('dir', 0o1777) }, ME)).toMatch(/mode 1777/);
  });

  test('symbolic links are not followed', () => {
    expect(stackFileProblem({ file: stat('link', 0o777), dir: stat('dir', 0o755) }, ME)).toBe(
      'it is not a regular file',
    );
    expect(stackFileProblem({ file: stat('file', 0o644), dir: stat('link', 0o777) }, ME)).toMatch(
      /not a plain directory/,
    );
  });

  test('without uids (Windows) only the kinds are checked', () => {
    expect(stackFileProblem({ file: stat('file', 0o666, 7), dir: stat('dir', 0o777, 7) }, undefined)).toBeNull();
  });
});

test('apiUrlProblem: http(s) only, and nothing in the URL that could carry or leak a secret', () => {
  expect(apiUrlProblem('http://127.0.0.1:3000')).toBeNull();
  expect(apiUrlProblem('https://amy.example.com/api')).toBeNull();
  expect(apiUrlProblem('ftp://example.com')).toBe('must be an http(s) URL');
  expect(apiUrlProblem('file:///etc/passwd')).toBe('must be an http(s) URL');
  expect(apiUrlProblem('not a url')).toBe('must be an http(s) URL');
  expect(apiUrlProblem('http://user:pass@example.com')).toBe('must not hold a user name or password');
  expect(apiUrlProblem('http://user@example.com')).toBe('must not hold a user name or password');
  expect(apiUrlProblem('http://example.com/?next=evil')).toBe('must not have a query or a fragment');
  expect(apiUrlProblem('http://example.com/#x')).toBe('must not have a query or a fragment');
});

describe('resolveConfig', () => {
  let root: string;
  let warnings: string[];
  const warn = (message: string) => void warnings.push(message);

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-config-'));
    warnings = [];
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  function plant(stack: object, modes: { file?: number; dir?: number } = {}) {
    const dir = path.join(root, '.data');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'stack.json'), JSON.stringify(stack));
    fs.chmodSync(path.join(dir, 'stack.json'), modes.file ?? 0o600);
    fs.chmodSync(dir, modes.dir ?? 0o700);
    const nested = path.join(root, 'a', 'b');
    fs.mkdirSync(nested, { recursive: true });
    return nested;
  }

  test('the file’s key goes only with the file’s URL', () => {
    const cwd = plant({ api_url: 'http://127.0.0.1:4100', demo_api_key: 'amy_from_file' });
    expect(resolveConfig({}, cwd, warn)).toMatchObject({ apiKey: 'amy_from_file', baseUrl: 'http://127.0.0.1:4100' });
    expect(warnings).toEqual([]);
  });

  test('AMY_API_KEY with a stack file but no AMY_BASE_URL: refused, the file’s URL is not used', () => {
    const cwd = plant({ api_url: 'http://attacker.example:4100', demo_api_key: 'amy_planted' });
    expect(() => resolveConfig({ AMY_API_KEY: 'amy_mine' }, cwd, warn)).toThrow(
      /AMY_API_KEY is set but AMY_BASE_URL is not: set AMY_BASE_URL/,
    );
    expect(
      resolveConfig({ AMY_API_KEY: 'amy_mine', AMY_BASE_URL: 'https://amy.example.com' }, cwd, warn),
    ).toMatchObject({ apiKey: 'amy_mine', baseUrl: 'https://amy.example.com' });
  });

  test('a world-writable file or directory is ignored with a warning that quotes nothing from it', () => {
    for (const modes of [{ file: 0o666 }, { dir: 0o777 }, { file: 0o620 }]) {
      warnings = [];
      const cwd = plant({ api_url: 'http://attacker.example', demo_api_key: 'amy_planted_secret' }, modes);
      expect(() => resolveConfig({}, cwd, warn)).toThrow(/^No API key/);
      expect(warnings).toEqual([expect.stringMatching(/^ignoring .*stack\.json: other users can write/)]);
      expect(warnings.join('')).not.toMatch(/amy_planted_secret|attacker/);
    }
  });

  test('a stack URL that is not a plain http(s) URL is refused before any request', () => {
    for (const api_url of ['ftp://example.com', 'http://user:pw@example.com', 'javascript:alert(1)']) {
      const cwd = plant({ api_url, demo_api_key: 'amy_secret_key' });
      const attempt = () => resolveConfig({}, cwd, warn);
      expect(attempt).toThrow(/api_url in .* must/);
      expect(attempt).not.toThrow(/amy_secret_key/);
    }
  });

  test('AMY_BASE_URL with credentials is refused', () => {
    expect(() => resolveConfig({ AMY_API_KEY: 'k', AMY_BASE_URL: 'http://u:p@example.com' }, root, warn)).toThrow(
      'AMY_BASE_URL must not hold a user name or password',
    );
  });

  test('a stack file that is not JSON is reported without quoting it', () => {
    const cwd = plant({});
    fs.writeFileSync(path.join(root, '.data', 'stack.json'), '{"demo_api_key": "amy_secret_key", broken');
    expect(() => resolveConfig({}, cwd, warn)).toThrow(/is not readable JSON \(not valid JSON\)/);
    expect(() => resolveConfig({}, cwd, warn)).not.toThrow(/amy_secret_key/);
  });
});
