/**
 * The command lines of the benchmarks (`npm run bench`, `npm run load`, …): the usage text is the script's own
 * header comment (the `npm run …` line and the option lines below it), so it cannot drift from the code's; and
 * what a report says about how it was run (the command as typed, the commit).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The lines of `file`'s header comment that start with ` *   npm run <command>` or an option (` *     `). */
export function usageFromHeader(file: string, command: string): string {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith(' *     ') || line.startsWith(` *   npm run ${command}`))
    .map((line) => line.slice(3))
    .join('\n');
}

/**
 * The options `parse` reads from this process's arguments; null after printing the usage for `--help`
 * (parse returns null). A bad option prints its error and the usage and exits 2.
 */
export function optionsOrUsage<T>(parse: (argv: string[]) => T | null, usage: string): T | null {
  let options: T | null;
  try {
    options = parse(process.argv.slice(2));
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : err}\n\n${usage}`);
    process.exit(2);
  }
  if (options === null) console.log(usage);
  return options;
}

/** The command as typed (`npm run <command> -- …`, shell-quoted), without the note, which a report shows on its own. */
export function commandLine(command: string, args: string[]): string {
  const shown = args.filter((arg, i) => arg !== '--note' && args[i - 1] !== '--note' && !arg.startsWith('--note='));
  const quote = (arg: string) => (/[\s'"]/.test(arg) ? `'${arg.replace(/'/g, `'\\''`)}'` : arg);
  return [`npm run ${command} --`, ...shown.map(quote)].join(' ');
}

/** The commit measured, and whether the service's files had uncommitted changes (others work in this tree). */
export function codeVersion(): string {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: path.resolve(__dirname, '..', '..') }).toString();
    const head = git('rev-parse', '--short', 'HEAD').trim();
    const dirty = git('status', '--porcelain', '--', '.', ':!dev/bench', ':!docs').split('\n').filter(Boolean).length;
    return dirty ? `${head} + uncommitted changes to ${dirty} files outside dev/bench/ and docs/` : head;
  } catch {
    return 'unknown';
  }
}
