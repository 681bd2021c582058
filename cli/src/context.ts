/** What every command runs with: the process's streams and environment, and the API client once configured. */
import { Amy } from '@amy/sdk';
import { resolveConfig, type CliConfig } from './config';
import type { SignalSource } from './watch/ctrl-c';

export interface CommandContext {
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  signals: SignalSource;
  /** Ends the process at once with this code (a third Ctrl-C). */
  exit(code: number): void;
  /** The client, configured on first use (a `ConfigError` if there is no key); `--help` never needs it. */
  amy(): Amy;
  /** The configuration, once `amy()` has resolved it. */
  config(): CliConfig | null;
}

export interface Command {
  /** The words that invoke it, e.g. `memory list`. */
  name: string;
  /** One line for `amy --help`. */
  summary: string;
  /** The text `amy <command> --help` prints. */
  help: string;
  /** A shorter name it also answers to when no option-free word follows (`memory` for `memory list`). */
  alias?: string;
  run(args: string[], ctx: CommandContext): Promise<number>;
}

export function processContext(): CommandContext {
  let config: CliConfig | null = null;
  let client: Amy | null = null;
  return {
    env: process.env,
    cwd: process.cwd(),
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    signals: process,
    exit: (code) => process.exit(code),
    amy() {
      config ??= resolveConfig(process.env, process.cwd(), (message) => process.stderr.write(`warning: ${message}\n`));
      client ??= new Amy({
        apiKey: config.apiKey,
        baseUrl: config.baseUrl,
        maxRetries: config.maxRetries,
        retryDelayMs: config.retryDelayMs,
      });
      return client;
    },
    config: () => config,
  };
}
