import { parseCommandLine } from '../args';
import type { Command } from '../context';
import { UsageError } from '../errors';
import { presenterFor } from '../watch/presenter';
import { terminalQuestions } from '../watch/questions';
import { watchTurn } from '../watch/watch-turn';

export const ask: Command = {
  name: 'ask',
  summary: 'ask Amy a question and watch her think',
  help: `Usage: amy ask "<question>" [--no-memory] [--no-biomarkers] [--no-questions] [--json]

Starts a turn with your question and watches it to the end: the agents at work with their
timers and thoughts, the validator's verdict on each finding, then the answer, its fact sheet,
the agents used, cost and duration.

Options
  --no-memory      leave what Amy remembers about you out of this turn (context.include_memory: false)
  --no-biomarkers  keep your lab results out of the turn (context.include_biomarkers: false)
  --no-questions   never let Amy ask back; she goes on with her defaults (the rule when not on a terminal)
  --json           print every event as one JSON object per line (NDJSON) and nothing else on stdout

On a terminal (stdin and stdout), Amy may ask back before costly or ambiguous work: the question
shows with its options numbered; type a number (or your own words when it takes them) and Enter,
or Enter alone for the default. Without an answer by the deadline the turn goes on with the default.

Ctrl-C stops watching and prints the command that resumes; a second Ctrl-C within 3 s cancels the turn.`,

  async run(args, ctx) {
    const { values, positionals } = parseCommandLine(
      'ask',
      args,
      {
        'no-memory': { type: 'boolean' },
        'no-biomarkers': { type: 'boolean' },
        'no-questions': { type: 'boolean' },
        json: { type: 'boolean' },
      },
      // Unquoted words are one question: `amy ask how did I sleep`.
      { names: ['question'], variadic: true },
    );
    const question = positionals.join(' ').trim();
    if (question === '') throw new UsageError('The question is empty. Run `amy ask --help` for usage.');
    // Only someone at a terminal can answer: piped or scripted, a turn never waits for an answer.
    const answerable = !values['no-questions'] && ctx.stdin.isTTY === true && ctx.stdout.isTTY === true;
    const turn = await ctx.amy().turns.create({
      messages: [{ role: 'user', content: question }],
      context: { include_memory: !values['no-memory'], include_biomarkers: !values['no-biomarkers'] },
      ...(answerable ? { interaction: { accepts: ['confirmation', 'clarification'] } } : {}),
    });
    return watchTurn(ctx, turn.id, presenterFor(ctx, values.json === true), {
      askQuestion: answerable ? terminalQuestions({ stdin: ctx.stdin, out: ctx.stderr }) : undefined,
    });
  },
};
