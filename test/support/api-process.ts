/**
 * The compiled API (`npm run api:prod`: `node dist/api/main.js`, ./compiled-roles.ts) as a real child
 * process on a port the test chooses, so a suite can SIGKILL it mid-stream and start another in its
 * place on the same address, or watch it survive its database going away. Stop it with `kill()`, or `killHard(child)` from ./worker-process.
 * `env` adds to its environment (e.g. `TZ`, or `HOST` for another address than loopback's); the config's variables
 * win. `onLine` sees every line it writes.
 */
import { launch, lineIncludes, type LaunchedProcess, type LaunchOptions } from '../../dev/stack/child-process';
import type { Config } from '../../platform/config';
import { COMPILED_API } from './compiled-roles';

export interface ApiProcess extends LaunchedProcess {
  url: string;
}

export async function spawnApiProcess(
  config: Config,
  port: number,
  opts: { env?: Record<string, string>; onLine?: LaunchOptions<true>['onLine'] } = {},
): Promise<ApiProcess> {
  const api = await launch({
    name: 'the API process',
    script: COMPILED_API,
    env: {
      ...opts.env,
      DATABASE_URL: config.DATABASE_URL,
      TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
      TEMPORAL_NAMESPACE: config.TEMPORAL_NAMESPACE,
      TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
      AMY_REPLAY_WINDOW_SECONDS: String(config.AMY_REPLAY_WINDOW_SECONDS),
      AMY_MAX_INFLIGHT_TURNS: String(config.AMY_MAX_INFLIGHT_TURNS),
      AMY_MAX_TURNS_PER_MINUTE: String(config.AMY_MAX_TURNS_PER_MINUTE),
      AMY_TURN_START_WAIT_MS: String(config.AMY_TURN_START_WAIT_MS),
      HOST: opts.env?.HOST ?? '127.0.0.1',
      PORT: String(port),
      // 'info' at least: start-up is recognised by the "api listening" line.
      LOG_LEVEL: 'info',
    },
    ready: lineIncludes('api listening'),
    onLine: opts.onLine,
  });
  return { ...api, url: `http://127.0.0.1:${port}` };
}
