/**
 * The `.data/stack.json` that `npm start` writes, as `amy` trusts it: found in the current directory or
 * a parent, and read only when nobody but the user could have written it. A file another user planted
 * (or could have rewritten) would otherwise decide where the user's requests, key included, are sent.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError } from './errors';

export const STACK_FILE = path.join('.data', 'stack.json');

const stackSchema = z.object({ api_url: z.string().min(1), demo_api_key: z.string().min(1) });
export type StackFile = z.infer<typeof stackSchema>;

/** What trusting a file takes from its `lstat` (and its directory's). */
export interface OwnershipStat {
  mode: number;
  uid: number;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

const GROUP_OR_WORLD_WRITABLE = 0o022;

/**
 * Why a stack file must not be trusted, or null. The file and the `.data` directory holding it must be
 * the user's own, not symbolic links, and writable by nobody else: then no one else can change, replace
 * or rename what is read. `uid` undefined (Windows) has no such modes to check.
 */
export function stackFileProblem(
  stats: { file: OwnershipStat; dir: OwnershipStat },
  uid: number | undefined,
): string | null {
  const { file, dir } = stats;
  if (dir.isSymbolicLink() || !dir.isDirectory()) return 'its .data directory is not a plain directory';
  if (file.isSymbolicLink() || !file.isFile()) return 'it is not a regular file';
  if (uid === undefined) return null;
  for (const [what, stat] of [
    ['it', file],
    ['its .data directory', dir],
  ] as const) {
    if (stat.uid !== uid) return `${what} belongs to another user (uid ${stat.uid}, you are ${uid})`;
    if ((stat.mode & GROUP_OR_WORLD_WRITABLE) !== 0) {
      const mode = (stat.mode & 0o7777).toString(8).padStart(4, '0');
      return `other users can write ${what} (mode ${mode}; \`chmod go-w\` fixes that)`;
    }
  }
  return null;
}

/** `.data/stack.json` in `dir` or the nearest parent that has one. */
export function findStackFile(dir: string): string | null {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const candidate = path.join(current, STACK_FILE);
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(current) === current) return null;
  }
}

/** The file's key and URL; null, with a warning, when it is not to be trusted. */
export function readStackFile(file: string, warn: (message: string) => void): StackFile | null {
  let problem: string | null;
  try {
    problem = stackFileProblem({ file: fs.lstatSync(file), dir: fs.lstatSync(path.dirname(file)) }, process.getuid?.());
  } catch (err) {
    problem = `it cannot be examined (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  if (problem) {
    warn(`ignoring ${file}: ${problem}.`);
    return null;
  }
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    // Only the error's code: a parse error would quote the file, and the file holds a key.
    const reason = (err as NodeJS.ErrnoException).code ?? 'not valid JSON';
    throw new ConfigError(`${file} is not readable JSON (${reason}): restart \`npm start\`.`);
  }
  const stack = stackSchema.safeParse(json);
  if (!stack.success) {
    throw new ConfigError(`${file} has no api_url and demo_api_key: restart \`npm start\`, or set AMY_API_KEY.`);
  }
  return stack.data;
}
