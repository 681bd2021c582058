/**
 * `npm run api` as a real child process (`node --import tsx api/main.ts`) on a port the test chooses,
 * so a suite can SIGKILL it mid-stream and start another in its place on the same address, or watch
 * it survive its database going away. Stop it with `killHard` from ./worker-process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Config } from '../../platform/config';

const root = path.resolve(__dirname, '..', '..');

export interface ApiProcess {
  url: string;
  child: ChildProcess;
  /** Whether the process is still running (an unhandled error would have ended it). */
  alive(): boolean;
  /** Everything it wrote to stdout and stderr (its JSON log lines), for failure messages. */
  output(): string;
}

export async function spawnApiProcess(config: Config, port: number): Promise<ApiProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'api', 'main.ts')], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: config.DATABASE_URL,
      TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
      TEMPORAL_NAMESPACE: config.TEMPORAL_NAMESPACE,
      TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
      AMY_REPLAY_WINDOW_SECONDS: String(config.AMY_REPLAY_WINDOW_SECONDS),
      AMY_MAX_INFLIGHT_TURNS: String(config.AMY_MAX_INFLIGHT_TURNS),
      HOST: '127.0.0.1',
      PORT: String(port),
      // 'info' at least: start-up is recognised by the "api listening" line.
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d));
  child.stderr?.on('data', (d: Buffer) => (output += d));
  await new Promise<void>((resolve, reject) => {
    const onExit = (code: number | null, signal: string | null) =>
      reject(new Error(`the API process exited (${code ?? signal}) before listening:\n${output}`));
    child.once('exit', onExit);
    // Registered after the collector above, so `output` already holds this chunk (and any line split across chunks).
    child.stdout?.on('data', () => {
      if (output.includes('api listening')) {
        child.off('exit', onExit);
        resolve();
      }
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    alive: () => child.exitCode === null && child.signalCode === null,
    output: () => output,
  };
}
