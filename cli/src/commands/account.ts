import type { AccountDeletion } from '@amy/sdk';
import { parseCommandLine } from '../args';
import { confirm } from '../confirm';
import type { Command } from '../context';
import { EXIT, UsageError } from '../errors';
import { terminalText } from '../terminal-text';

export const accountDelete: Command = {
  name: 'account delete',
  summary: 'delete your account and everything in it, for good (asks first; --yes to skip)',
  help: `Usage: amy account delete [--yes]

Deletes your account everywhere (DELETE /v1/account): your turns (a running one is stopped) and their
workflow histories in Temporal, your memory, your health data and every API key, this one included.
The account's data keys are destroyed too, so no copy of its histories can be decrypted. It cannot
be undone. Prints what was erased, and what the service keeps and why.

It asks you to type "delete" on the terminal first (exit 1 otherwise). Without a terminal it refuses
(exit 2) unless --yes is given.

Options
  --yes  delete without asking`,

  async run(args, ctx) {
    const { values } = parseCommandLine('account delete', args, { yes: { type: 'boolean' } }, { names: [] });
    if (!values.yes && !ctx.stdin.isTTY) {
      throw new UsageError(
        'amy account delete deletes your account for good and asks first on a terminal; pass --yes to skip asking.',
      );
    }
    const question =
      'Delete your account, with all your turns, memory and health data? This cannot be undone. Type "delete" to confirm: ';
    if (!values.yes && !(await confirm(ctx, question, /^delete$/i))) {
      ctx.stderr.write('Nothing was deleted.\n');
      return EXIT.failed;
    }
    ctx.stdout.write(terminalText(describeDeletion(await ctx.amy().account.delete())));
    return EXIT.completed;
  },
};

/** What was erased, a line per kind, then what is kept and why. */
function describeDeletion(deletion: AccountDeletion): string {
  const erased = Object.entries(deletion.erased).map(([what, n]) => `  ${what.replace(/_/g, ' ')}: ${n}`);
  const kept = deletion.kept.map(({ what, why }) => `  ${what}: ${why}`);
  return [`Your account was deleted at ${deletion.deleted_at}. Erased:`, ...erased, 'Kept:', ...kept, ''].join('\n');
}
