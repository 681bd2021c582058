/**
 * `amy`'s commands: finds the one asked for, prints help, runs it, and turns whatever it threw into
 * one plain line on stderr and an exit code (./errors.ts).
 */
import { accountDelete } from './commands/account';
import { ask } from './commands/ask';
import { dataConnections, dataDelete, dataList, dataProfile, dataProfileSet } from './commands/data';
import { dataExport } from './commands/data-export';
import { dataUpload } from './commands/data-upload';
import { memoryAdd, memoryList, memoryRm } from './commands/memory';
import { reset } from './commands/reset';
import { trace } from './commands/trace';
import { turnsCancel, turnsGet } from './commands/turns';
import { watch } from './commands/watch';
import type { Command, CommandContext } from './context';
import { describeError, EXIT, exitCodeFor } from './errors';
import { terminalLine } from './terminal-text';

const COMMANDS: Command[] = [
  ask,
  watch,
  trace,
  turnsGet,
  turnsCancel,
  memoryList,
  memoryAdd,
  memoryRm,
  reset,
  dataUpload,
  dataList,
  dataDelete,
  dataExport,
  // Before `data profile`, which its first two words would match.
  dataProfileSet,
  dataProfile,
  dataConnections,
  accountDelete,
];

/** The widest command name, so that the summaries line up. */
const NAME_WIDTH = Math.max(...COMMANDS.map((c) => c.name.length)) + 1;

const HELP = `amy: ask Amy and watch her think.

Usage: amy <command> [options]      amy <command> --help for its details

${COMMANDS.map((c) => `  ${c.name.padEnd(NAME_WIDTH)} ${c.summary}`).join('\n')}

\`amy memory\` alone is \`amy memory list\`.

A terminal shows the live view: the agents at work with their timers and thoughts, a line per
finding (its gates ✓ passed, ✗ failed, – skipped, then the Critic's verdict), the answer, its
fact sheet, agents, cost and duration. Piped, the same blocks come as plain text; NO_COLOR turns
colour off. --json prints the events themselves, one JSON object per line.

amy data sends, lists, deletes and exports your own health data (daily summaries, workouts, lab
results, the profile); \`amy data export <dir>\` writes files that \`amy data upload\` reads back.
\`amy data connections\` lists the providers you connected through Terra.

Configuration: AMY_API_KEY and AMY_BASE_URL; with AMY_API_KEY unset, the key and URL of the
.data/stack.json that \`npm start\` writes (looked for in this directory and its parents, and
ignored with a warning when other users can write it). A key from AMY_API_KEY is never sent to a
stack file's URL: set AMY_BASE_URL with it. AMY_MAX_RETRIES (default 5) and AMY_RETRY_DELAY_MS
(default 1000) tune retries and stream reconnects.

Exit codes: 0 completed · 1 the turn failed, or the service did (a 5xx, 429) · 2 usage or
configuration error (a bad key, a row the API refuses, no such turn or workout) · 3 the turn was
cancelled · 4 the API could not be reached or the stream gave up · 130 detached with Ctrl-C. The first Ctrl-C stops watching (the turn keeps running) and prints the command that
resumes; a second one within 3 s cancels the turn and waits for it to end.`;

export async function runAmy(argv: string[], ctx: CommandContext): Promise<number> {
  const [first] = argv;
  if (first === undefined) {
    ctx.stderr.write(`${HELP}\n`);
    return EXIT.usage;
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    ctx.stdout.write(`${HELP}\n`);
    return EXIT.completed;
  }
  const found = findCommand(argv);
  if (!found) {
    const group = COMMANDS.filter((c) => c.name.startsWith(`${first} `));
    if (group.length > 0 && wantsHelp(argv.slice(1))) {
      ctx.stdout.write(`${group.map((c) => `amy ${c.name.padEnd(NAME_WIDTH)} ${c.summary}`).join('\n')}\n`);
      return EXIT.completed;
    }
    const hint =
      group.length > 0
        ? `amy ${first} takes one of: ${[...new Set(group.map((c) => c.name.split(' ')[1]))].join(', ')}`
        : `Unknown command ${JSON.stringify(first)}`;
    ctx.stderr.write(`error: ${terminalLine(hint)}. Run \`amy --help\` for the commands.\n`);
    return EXIT.usage;
  }
  const { command, args } = found;
  if (wantsHelp(args)) {
    ctx.stdout.write(`${command.help}\n`);
    return EXIT.completed;
  }
  try {
    return await command.run(args, ctx);
  } catch (err) {
    const code = exitCodeFor(err);
    ctx.stderr.write(`error: ${describeError(err)}\n`);
    const config = ctx.config();
    if (code === EXIT.unreachable && config) {
      ctx.stderr.write(
        `${terminalLine(`Is the API running at ${config.baseUrl} (${config.baseUrlSource})?`)} \`npm start\` starts one.\n`,
      );
    }
    return code;
  }
}

/** The command the words name; else one whose alias they name, when what follows is options only. */
function findCommand(argv: string[]): { command: Command; args: string[] } | undefined {
  const named = COMMANDS.find((c) => c.name.split(' ').every((word, i) => argv[i] === word));
  if (named) return { command: named, args: argv.slice(named.name.split(' ').length) };
  for (const command of COMMANDS) {
    const words = command.alias?.split(' ') ?? [];
    if (words.length === 0 || !words.every((word, i) => argv[i] === word)) continue;
    const args = argv.slice(words.length);
    // `amy memory --help` is the group's help; `amy memory show` an unknown subcommand.
    if (args[0] === undefined || (args[0].startsWith('-') && !wantsHelp(args))) return { command, args };
  }
  return undefined;
}

/** `--help` or `-h` anywhere before a `--` that ends the options. */
function wantsHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}
