import type { Turn } from '@amy/sdk';
import { parseCommandLine } from '../args';
import type { Command } from '../context';
import { codeAndRequest } from '../errors';
import { terminalJson, terminalLine, terminalText } from '../terminal-text';
import { formatDuration, formatUsd } from '../view/text';

export const turnsGet: Command = {
  name: 'turns get',
  summary: 'show a turn: status, question, answer or error, cost, progress while it runs',
  help: `Usage: amy turns get <turn_id> [--json]

Shows the stored turn, readable forever: its status, the question, the answer or the error, what
it cost, and while it runs the step it is in. The event count is where \`amy watch --after\` resumes.

Options
  --json  print the Turn object as the API returns it`,

  async run(args, ctx) {
    const { values, positionals } = parseCommandLine(
      'turns get',
      args,
      { json: { type: 'boolean' } },
      { names: ['turn_id'] },
    );
    const turn = await ctx.amy().turns.get(positionals[0]);
    if (values.json) ctx.stdout.write(`${terminalJson(turn)}\n`);
    else printTurn(ctx.stdout, turn);
    return 0;
  },
};

export const turnsCancel: Command = {
  name: 'turns cancel',
  summary: 'cancel a running turn (it ends failed, code cancelled)',
  help: `Usage: amy turns cancel <turn_id> [--json]

Asks a running turn to stop: it ends failed with code \`cancelled\` (\`amy watch\` on it exits 3).
A turn that has already ended is left as it is. Safe to repeat.

Options
  --json  print the Turn object as the API returns it`,

  async run(args, ctx) {
    const { values, positionals } = parseCommandLine(
      'turns cancel',
      args,
      { json: { type: 'boolean' } },
      { names: ['turn_id'] },
    );
    const turn = await ctx.amy().turns.cancel(positionals[0]);
    const id = terminalLine(turn.id);
    if (values.json) ctx.stdout.write(`${terminalJson(turn)}\n`);
    else if (turn.status === 'completed' || turn.status === 'failed') {
      ctx.stdout.write(`${id} had already ended (${turn.status}); nothing was cancelled.\n`);
    } else ctx.stdout.write(`Cancelling ${id}: it will end failed with code cancelled.\n`);
    return 0;
  },
};

function printTurn(out: NodeJS.WritableStream, turn: Turn) {
  const question = turn.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
  const rows: Array<[string, string]> = [
    ['turn', `${turn.id} · ${turn.status}${turn.attempt > 1 ? ` · attempt ${turn.attempt}` : ''}`],
    ['asked', `${turn.created_at} · ${question}`],
  ];
  if (turn.completed_at) rows.push(['ended', turn.completed_at]);
  if (turn.progress) {
    const { current_step, completed_steps, cost_usd_so_far } = turn.progress;
    rows.push([
      'step',
      `${current_step ?? 'waiting'} (${completed_steps.length} done) · ${formatUsd(cost_usd_so_far)} so far`,
    ]);
  }
  if (turn.result) {
    const { result } = turn;
    rows.push(['agents', result.agents_used.join(', ') || 'none']);
    rows.push(['cost', `${formatUsd(result.cost_usd)} · ${formatDuration(result.duration_ms)}`]);
  } else if (turn.cost_usd !== null) rows.push(['cost', formatUsd(turn.cost_usd)]);
  if (turn.error)
    rows.push([
      'error',
      `${turn.error.message} ${codeAndRequest({ code: turn.error.code, requestId: turn.error.request_id || undefined })}`,
    ]);
  rows.push(['events', `${turn.last_event_id} (watch from here: amy watch ${turn.id} --after ${turn.last_event_id})`]);
  // Each row holds the service's strings (ids, steps, agents, the question): one safe line each.
  for (const [label, value] of rows) out.write(`${label.padEnd(7)} ${terminalLine(value)}\n`);
  if (turn.result) out.write(`\n${terminalText(turn.result.answer).trim()}\n`);
}
