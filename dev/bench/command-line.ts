/**
 * The command lines of `npm run bench` and `npm run load`: the usage text is the script's own header
 * comment (the `npm run …` line and the option lines below it), so it cannot drift from the code's.
 */
import fs from 'node:fs';

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
