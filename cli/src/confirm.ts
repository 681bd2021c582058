import readline from 'node:readline';
import type { CommandContext } from './context';

/** A question on the terminal, answered yes when the answer matches `accept` (y / yes); Ctrl-C or end of input is a no. */
export function confirm(ctx: CommandContext, question: string, accept = /^y(es)?$/i): Promise<boolean> {
  const rl = readline.createInterface({ input: ctx.stdin, output: ctx.stderr, terminal: true });
  return new Promise((resolve) => {
    let answer: string | null = null;
    rl.on('SIGINT', () => rl.close());
    rl.on('close', () => {
      if (answer === null) ctx.stderr.write('\n');
      resolve(answer !== null && accept.test(answer.trim()));
    });
    rl.question(question, (line) => {
      answer = line;
      rl.close();
    });
  });
}
