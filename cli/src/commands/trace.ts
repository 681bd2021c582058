import path from 'node:path';
import { parseCommandLine } from '../args';
import type { Command } from '../context';
import { TraceFile } from '../watch/trace-file';
import { watchTurn } from '../watch/watch-turn';

export const trace: Command = {
  name: 'trace',
  summary: 'save every event of a turn to an NDJSON file, kept after the 1-hour replay window',
  help: `Usage: amy trace <turn_id> [-o <file>]

Writes every event of the turn to a file as it arrives, one JSON object per line (NDJSON, the
same objects as --json), following a running turn to its end. The service replays a turn's events
for an hour after it ends; a trace keeps them for good. Exits like \`amy watch\`: with the turn's outcome.

Options
  -o, --output <file>  where to write (default: <turn_id>.jsonl in the current directory; replaced if it exists)`,

  async run(args, ctx) {
    const { values, positionals } = parseCommandLine(
      'trace',
      args,
      { output: { type: 'string', short: 'o' } },
      { names: ['turn_id'] },
    );
    const turnId = positionals[0];
    const file = new TraceFile(path.resolve(ctx.cwd, values.output ?? `${turnId}.jsonl`), ctx.stderr);
    try {
      return await watchTurn(ctx, turnId, file, {
        resumeCommand: () => `amy trace ${turnId}${values.output ? ` -o ${values.output}` : ''}`,
      });
    } finally {
      file.close();
      if (file.written > 0) {
        ctx.stdout.write(
          `Wrote ${file.written} events (ids ${file.firstId}–${file.lastId}) of ${turnId} to ${file.path}\n`,
        );
      }
    }
  },
};
