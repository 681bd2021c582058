import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Config } from '../../platform/config';
import { readTestEnv } from './test-env';

const root = path.resolve(__dirname, '..', '..');

/**
 * `npm run worker` as a real child process, so a test can SIGKILL it mid-turn. `script` runs another
 * worker entry point instead (one that prints `worker polling` once it polls), with `env` added.
 */
export async function spawnWorkerProcess(
  config: Config,
  opts: { script?: string; env?: Record<string, string> } = {},
): Promise<ChildProcess> {
  const script = opts.script ?? path.join(root, 'worker', 'main.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: {
      ...process.env,
      ...opts.env,
      DATABASE_URL: config.DATABASE_URL,
      TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
      ANTHROPIC_BASE_URL: config.ANTHROPIC_BASE_URL,
      WORKFLOW_BUNDLE_PATH: readTestEnv().workflowBundlePath,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += d));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('worker polling')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code} before polling: ${stderr}`)));
  });
  return child;
}

export function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
