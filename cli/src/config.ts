/**
 * Where the API is and which key to use, resolved once per command. A key is only ever sent where its
 * owner said to send it:
 *
 * - `AMY_API_KEY` and `AMY_BASE_URL` when they are set;
 * - otherwise the `.data/stack.json` that `npm start` writes (its `demo_api_key` and `api_url`), looked
 *   for in the current directory and then each parent, so `amy` works anywhere in the checkout. The
 *   file's URL comes only with the file's own key: a key from `AMY_API_KEY` is never sent to a URL read
 *   from a file (anyone who can write a file in a parent directory could plant one), so that case needs
 *   `AMY_BASE_URL`. A file that other users can write, or that is not the user's own, is ignored with a
 *   warning (./stack-file.ts);
 * - otherwise the SDK's default address, and no key: a configuration error.
 *
 * Every URL is checked before any request: http or https, and no user name, password, query or fragment.
 *
 * `AMY_MAX_RETRIES` and `AMY_RETRY_DELAY_MS` tune the SDK's retries (requests, and stream reconnects in a row).
 */
import { z } from 'zod';
import { DEFAULT_BASE_URL } from '@amy/sdk';
import { ConfigError } from './errors';
import { findStackFile, readStackFile, STACK_FILE } from './stack-file';

export interface CliConfig {
  apiKey: string;
  baseUrl: string;
  maxRetries: number | undefined;
  retryDelayMs: number | undefined;
  /** Where `baseUrl` came from, named when the API cannot be reached. */
  baseUrlSource: string;
}

/** An empty variable counts as unset, as in a shell's `AMY_BASE_URL= amy …`. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (typeof value === 'string' && value.trim() === '' ? undefined : value), schema.optional());

const wholeNumber = (min: number, max: number) => {
  const error = `must be a whole number from ${min} to ${max}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};

/** Why `url` cannot be where the API is, or null: a key sent there must not leak through the URL itself. */
export function apiUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an http(s) URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an http(s) URL';
  if (parsed.username !== '' || parsed.password !== '') return 'must not hold a user name or password';
  if (parsed.search !== '' || parsed.hash !== '') return 'must not have a query or a fragment';
  return null;
}

const envSchema = z.object({
  AMY_API_KEY: optional(z.string().trim()),
  AMY_BASE_URL: optional(
    z.string().superRefine((url, ctx) => {
      const problem = apiUrlProblem(url);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  ),
  AMY_MAX_RETRIES: optional(wholeNumber(0, 100)),
  AMY_RETRY_DELAY_MS: optional(wholeNumber(0, 600_000)),
});

/**
 * @param warn where a stack file that is ignored is reported (stderr); the file's contents never are.
 */
export function resolveConfig(env: NodeJS.ProcessEnv, cwd: string, warn: (message: string) => void): CliConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`${issue.path.join('.')} ${issue.message}`);
  }
  const vars = parsed.data;
  const settings = { maxRetries: vars.AMY_MAX_RETRIES, retryDelayMs: vars.AMY_RETRY_DELAY_MS };

  if (vars.AMY_API_KEY) {
    if (vars.AMY_BASE_URL) {
      return { apiKey: vars.AMY_API_KEY, baseUrl: vars.AMY_BASE_URL, baseUrlSource: 'AMY_BASE_URL', ...settings };
    }
    const stackFile = findStackFile(cwd);
    if (stackFile) {
      throw new ConfigError(
        `AMY_API_KEY is set but AMY_BASE_URL is not: set AMY_BASE_URL to the API this key belongs to. ` +
          `The api_url in ${stackFile} is used only with that file's own key, never with AMY_API_KEY.`,
      );
    }
    return { apiKey: vars.AMY_API_KEY, baseUrl: DEFAULT_BASE_URL, baseUrlSource: 'the default address', ...settings };
  }

  const stackFile = findStackFile(cwd);
  const stack = stackFile ? readStackFile(stackFile, warn) : null;
  if (!stackFile || !stack) {
    throw new ConfigError(
      `No API key: set AMY_API_KEY, or start the local stack with \`npm start\` (amy then reads ${STACK_FILE} ` +
        `from this directory or a parent).`,
    );
  }
  if (vars.AMY_BASE_URL) {
    return { apiKey: stack.demo_api_key, baseUrl: vars.AMY_BASE_URL, baseUrlSource: 'AMY_BASE_URL', ...settings };
  }
  const problem = apiUrlProblem(stack.api_url);
  if (problem) {
    throw new ConfigError(`The api_url in ${stackFile} ${problem}: restart \`npm start\`, or set AMY_BASE_URL.`);
  }
  return { apiKey: stack.demo_api_key, baseUrl: stack.api_url, baseUrlSource: `api_url in ${stackFile}`, ...settings };
}
