/** Shared by the command-line tools: where Postgres is, and how a command reports failure. */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { PROJECT_ROOT } from '../platform/project-root';

/** Written by `npm start` (dev/stack/main.ts) while the local stack runs. */
const STACK_FILE = path.join(PROJECT_ROOT, '.data', 'stack.json');

/** A problem the user can fix (bad argument, missing file): printed as one line, without a stack trace. */
export class CliError extends Error {
  override name = 'CliError';
}

/** DATABASE_URL if set, else the Postgres of the stack that `npm start` is running. */
export function resolveDatabaseUrl(env: NodeJS.ProcessEnv = process.env, stackFile = STACK_FILE): string {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  if (!fs.existsSync(stackFile)) {
    throw new CliError(
      `no database: set DATABASE_URL, or start the local stack with \`npm start\` in another terminal (it writes ${stackFile})`,
    );
  }
  let stack: unknown;
  try {
    stack = JSON.parse(fs.readFileSync(stackFile, 'utf8'));
  } catch {
    stack = undefined; // half-written or corrupt: the advice below fits
  }
  const parsed = z.object({ postgres_url: z.string().min(1) }).safeParse(stack);
  if (!parsed.success) {
    throw new CliError(`${stackFile} has no postgres_url: restart \`npm start\` or set DATABASE_URL`);
  }
  return parsed.data.postgres_url;
}

type ErrorClass = new (...args: never[]) => Error;

/** Prints `error: <message>` for CliError and the given domain errors, the full error otherwise; exit code 1. */
export function failCommand(err: unknown, expected: ErrorClass[] = []) {
  const userFacing = [CliError, ...expected].some((type) => err instanceof type);
  console.error(userFacing ? `error: ${(err as Error).message}` : err);
  process.exitCode = 1;
}

const DEV_MASTER_KEY_FILE = path.join(PROJECT_ROOT, '.data', 'master.key');

/**
 * The master key's environment (platform/crypto/master-key.ts): as set, or else the key file `npm start`
 * made for the local stack (docs/operations.md#keys), so the scripts work against it as they do for its database.
 */
export function masterKeyEnv(env: NodeJS.ProcessEnv = process.env, keyFile = DEV_MASTER_KEY_FILE): NodeJS.ProcessEnv {
  if (env.AMY_MASTER_KEY || env.AMY_MASTER_KEY_FILE || !fs.existsSync(keyFile)) return env;
  return { ...env, AMY_MASTER_KEY_FILE: keyFile };
}
