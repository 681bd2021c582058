import { parseCommandLine } from '../args';
import type { Command } from '../context';
import { UsageError } from '../errors';
import { presenterFor } from '../watch/presenter';
import { watchTurn } from '../watch/watch-turn';

export const ask: Command = {
  name: 'ask',
  summary: 'ask Amy a question and watch her think',
  help: `Usage: amy ask "<question>" [--no-memory] [--no-biomarkers] [--json]

Starts a turn with your question and watches it to the end: the agents at work with their
timers and thoughts, the validator's verdict on each finding, then the answer, its fact sheet,
the agents used, cost and duration.

Options
  --no-memory      leave what Amy remembers about you out of this turn (context.include_memory: false)
  --no-biomarkers  keep your lab results out of the turn (context.include_biomarkers: false)
  --json           print every event as one JSON object per line (NDJSON) and nothing else on stdout

Ctrl-C stops watching and prints the command that resumes; a second Ctrl-C within 3 s cancels the turn.`,

  async run(args, ctx) {
    const { values, positionals } = parseCommandLine(
      'ask',
      args,
      {
        'no-memory': { type: 'boolean' },
        'no-biomarkers': { type: 'boolean' },
        json: { type: 'boolean' },
      },
      // Unquoted words are one question: `amy ask how did I sleep`.
      { names: ['question'], variadic: true },
    );
    const question = positionals.join(' ').trim();
    if (question === '') throw new UsageError('The question is empty. Run `amy ask --help` for usage.');
    const turn = await ctx.amy().turns.create({
      messages: [{ role: 'user', content: question }],
      context: { include_memory: !values['no-memory'], include_biomarkers: !values['no-biomarkers'] },
    });
    return watchTurn(ctx, turn.id, presenterFor(ctx, values.json === true));
  },
};
