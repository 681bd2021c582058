import { parseCommandLine, parseEventId } from '../args';
import type { Command } from '../context';
import { presenterFor } from '../watch/presenter';
import { watchTurn } from '../watch/watch-turn';

export const watch: Command = {
  name: 'watch',
  summary: 'watch a running or finished turn (from the start, or after an event id)',
  help: `Usage: amy watch <turn_id> [--after N] [--json]

Watches a turn to its end, live if it is still running. Its events are replayed from the start,
or from just after event N: the command Ctrl-C prints resumes exactly where the view stopped. The
service keeps a turn's events for an hour after it ends (\`amy trace\` keeps them for good); after
that, only its outcome is shown.

Options
  --after N  start after event N (the first event shown is N + 1)
  --json     print every event as one JSON object per line (NDJSON) and nothing else on stdout

Ctrl-C stops watching and prints the command that resumes; a second Ctrl-C within 3 s cancels the turn.`,

  async run(args, ctx) {
    const { values, positionals } = parseCommandLine(
      'watch',
      args,
      { after: { type: 'string' }, json: { type: 'boolean' } },
      { names: ['turn_id'] },
    );
    const afterEventId = parseEventId(values.after, '--after', 'watch');
    return watchTurn(ctx, positionals[0], presenterFor(ctx, values.json === true), { afterEventId });
  },
};
