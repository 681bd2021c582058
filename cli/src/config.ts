/**
 * Where the API is and which key to use, resolved once per command:
 *
 * - `AMY_API_KEY` and `AMY_BASE_URL` when they are set;
 * - otherwise the `.data/stack.json` that `npm start` writes (its `demo_api_key` and `api_url`), looked
 *   for in the current directory and then each parent, so `amy` works anywhere in the checkout;
 * - otherwise the SDK's default address, and no key: a configuration error.
 *
 * `AMY_MAX_RETRIES` and `AMY_RETRY_DELAY_MS` tune the SDK's retries (requests, and stream reconnects in a row).
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_BASE_URL } from '@amy/sdk';
import { ConfigError } from './errors';

export interface CliConfig {
  apiKey: string;
  baseUrl: string;
  maxRetries: number | undefined;
  retryDelayMs: number | undefined;
  /** Where `baseUrl` came from, named when the API cannot be reached. */
  baseUrlSource: string;
}

const STACK_FILE = path.join('.data', 'stack.json');

/** An empty variable counts as unset, as in a shell's `AMY_BASE_URL= amy …`. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (typeof value === 'string' && value.trim() === '' ? undefined : value), schema.optional());

const wholeNumber = (min: number, max: number) => {
  const error = `must be a whole number from ${min} to ${max}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};

const envSchema = z.object({
  AMY_API_KEY: optional(z.string().trim()),
  AMY_BASE_URL: optional(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })),
  AMY_MAX_RETRIES: optional(wholeNumber(0, 100)),
  AMY_RETRY_DELAY_MS: optional(wholeNumber(0, 600_000)),
});

const stackSchema = z.object({ api_url: z.string().min(1), demo_api_key: z.string().min(1) });

export function resolveConfig(env: NodeJS.ProcessEnv, cwd: string): CliConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`${issue.path.join('.')} ${issue.message}`);
  }
  const vars = parsed.data;
  const stackFile = vars.AMY_API_KEY && vars.AMY_BASE_URL ? null : findStackFile(cwd);
  const stack = stackFile ? readStack(stackFile) : null;
  const apiKey = vars.AMY_API_KEY ?? stack?.demo_api_key;
  if (!apiKey) {
    throw new ConfigError(
      `No API key: set AMY_API_KEY, or start the local stack with \`npm start\` (amy then reads ${STACK_FILE} ` +
        `from this directory or a parent).`,
    );
  }
  const [baseUrl, baseUrlSource] = vars.AMY_BASE_URL
    ? [vars.AMY_BASE_URL, 'AMY_BASE_URL']
    : stack
      ? [stack.api_url, `api_url in ${stackFile}`]
      : [DEFAULT_BASE_URL, 'the default address'];
  return {
    apiKey,
    baseUrl,
    baseUrlSource,
    maxRetries: vars.AMY_MAX_RETRIES,
    retryDelayMs: vars.AMY_RETRY_DELAY_MS,
  };
}

/** `.data/stack.json` in `dir` or the nearest parent that has one. */
function findStackFile(dir: string): string | null {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const candidate = path.join(current, STACK_FILE);
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(current) === current) return null;
  }
}

function readStack(file: string): z.infer<typeof stackSchema> {
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${file} is not readable JSON (${(err as Error).message}): restart \`npm start\`.`);
  }
  const stack = stackSchema.safeParse(json);
  if (!stack.success) {
    throw new ConfigError(`${file} has no api_url and demo_api_key: restart \`npm start\`, or set AMY_API_KEY.`);
  }
  return stack.data;
}
