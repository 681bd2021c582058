import { NotFoundError, type Memory } from '@amy/sdk';
import { parseCommandLine } from '../args';
import type { Command } from '../context';
import { confirm } from '../confirm';
import { EXIT, UsageError } from '../errors';
import { terminalLine } from '../terminal-text';
import { everything } from './memory';

export const reset: Command = {
  name: 'reset',
  summary:
    'deletes all your memory entries, tested hypotheses included; turns, health data and API keys are kept (asks first)',
  help: `Usage: amy reset [--yes]

Deletes every memory entry of the key's user: goals, insights, preferences, history and the
validator's tested_hypothesis entries (exactly what \`amy memory list --all\` lists). Later turns
start with no memory: no agent sees any, and the Investigator may propose hypotheses it had already
tested. There is no bulk delete in the API, so amy lists them all first and then deletes them one by
one; deletion is immediate and for good. Entries written after the listing (by a turn still running)
are kept.

Only memory is reset: your turns, health data (daily rows, workouts, labs), profile and
API keys are not touched. \`amy account delete\` deletes everything.

It asks for confirmation on the terminal first (exit 1 if you decline). Without a terminal it
refuses (exit 2) unless --yes is given.

Options
  --yes  delete without asking`,

  async run(args, ctx) {
    const { values } = parseCommandLine('reset', args, { yes: { type: 'boolean' } }, { names: [] });
    if (!values.yes && !ctx.stdin.isTTY) {
      throw new UsageError(
        'amy reset deletes all of your memory and asks first on a terminal; pass --yes to skip asking.',
      );
    }
    const amy = ctx.amy();
    const entries: Memory[] = [];
    // Everything is listed before anything is deleted: deleting while paging would move the cursor's ground.
    for await (const memory of amy.memory.list(everything({}))) entries.push(memory);
    if (entries.length === 0) {
      ctx.stdout.write('There is no memory to delete.\n');
      return EXIT.completed;
    }
    if (!values.yes && !(await confirm(ctx, `Delete all ${describeEntries(entries)}? This cannot be undone. [y/N] `))) {
      ctx.stderr.write('Nothing was deleted.\n');
      return EXIT.failed;
    }
    for (const memory of entries) {
      // Gone already (another client deleted it meanwhile) is what we wanted.
      await amy.memory.delete(memory.id).catch((err: unknown) => {
        if (!(err instanceof NotFoundError)) throw err;
      });
    }
    ctx.stdout.write(`Deleted ${describeEntries(entries)}.\n`);
    return EXIT.completed;
  },
};

/** "12 memory entries (3 goal, 2 preference, 7 tested_hypothesis)" */
function describeEntries(entries: Memory[]): string {
  const counts = new Map<string, number>();
  for (const { category } of entries) counts.set(terminalLine(category), (counts.get(terminalLine(category)) ?? 0) + 1);
  const parts = [...counts].map(([category, n]) => `${n} ${category}`).join(', ');
  return `${entries.length} memory ${entries.length === 1 ? 'entry' : 'entries'} (${parts})`;
}
