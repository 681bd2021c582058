/** `amy` as a child process: run to the end, or started and driven (signals, waiting for output). */
import { spawn, type ChildProcess } from 'node:child_process';
import { AMY_BIN, REPO_ROOT } from '../workspace-build';

export interface AmyRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunningAmy {
  child: ChildProcess;
  output(): AmyRun;
  /** Resolves once stdout or stderr matches, with the match. */
  waitFor(pattern: RegExp, stream?: 'stdout' | 'stderr', timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<AmyRun>;
}

/** The environment `amy` gets: the test's own, minus anything that would configure it behind the test's back. */
function amyEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of ['AMY_API_KEY', 'AMY_BASE_URL', 'AMY_MAX_RETRIES', 'AMY_RETRY_DELAY_MS', 'NO_COLOR']) {
    delete base[name];
  }
  return { ...base, ...env };
}

export function startAmy(
  args: string[],
  options: { env: Record<string, string>; cwd?: string; command?: [string, string[]] },
): RunningAmy {
  const [file, argv] = options.command ?? [process.execPath, [AMY_BIN, ...args]];
  const child = spawn(file, argv, { cwd: options.cwd ?? REPO_ROOT, env: amyEnv(options.env), stdio: 'pipe' });
  const run: AmyRun = { code: null, stdout: '', stderr: '' };
  const waiters: Array<() => void> = [];
  const collect = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    run[stream] += chunk.toString();
    waiters.forEach((check) => check());
  };
  child.stdout.on('data', collect('stdout'));
  child.stderr.on('data', collect('stderr'));
  const exited = new Promise<AmyRun>((resolve) =>
    child.on('close', (code, signal) => {
      run.code = code ?? (signal ? 128 : null);
      waiters.forEach((check) => check());
      resolve(run);
    }),
  );
  return {
    child,
    output: () => run,
    exited,
    waitFor(pattern, stream = 'stdout', timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${pattern} on ${stream} within ${timeoutMs} ms:\n${run.stdout}\n${run.stderr}`)),
          timeoutMs,
        );
        const check = () => {
          const match = run[stream].match(pattern);
          if (match) {
            clearTimeout(timer);
            resolve(match);
          } else if (run.code !== null) {
            clearTimeout(timer);
            reject(new Error(`amy exited ${run.code} before ${pattern} on ${stream}:\n${run.stdout}\n${run.stderr}`));
          }
        };
        waiters.push(check);
        check();
      });
    },
  };
}

export function runAmy(args: string[], options: { env: Record<string, string>; cwd?: string }): Promise<AmyRun> {
  const running = startAmy(args, options);
  running.child.stdin?.end();
  return running.exited;
}
