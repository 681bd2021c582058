import type { Memory, MemoryListParams } from '@amy/sdk';
import { parseCommandLine } from '../args';
import type { Command } from '../context';
import { UsageError } from '../errors';
import { ALL_MEMORY_CATEGORIES, MEMORY_CATEGORIES, TESTED_HYPOTHESIS } from '../../../contracts/memory';
import { terminalJson, terminalLine } from '../terminal-text';

type MemoryCategory = (typeof ALL_MEMORY_CATEGORIES)[number];
type WritableCategory = (typeof MEMORY_CATEGORIES)[number];

export const memoryList: Command = {
  name: 'memory list',
  alias: 'memory',
  summary: 'list what Amy remembers about you (first page; --all for everything); `amy memory` alone too',
  help: `Usage: amy memory list [--category <category>] [--all] [--json]
       amy memory [--category <category>] [--all] [--json]

Lists memory entries, newest first: id, category, date and text. \`amy memory\` with no subcommand
does the same.

By default this is the first page (20 entries) of what Amy remembers for you: goals, insights,
preferences and history. --all reads every page and includes the validator's bookkeeping
(tested_hypothesis entries, one per finding it has checked), so it lists exactly what
\`amy reset\` deletes.

Options
  --category <c>  only this category: ${ALL_MEMORY_CATEGORIES.join(', ')}
  --all           every page, tested hypotheses included
  --json          one Memory object per line (NDJSON)`,

  async run(args, ctx) {
    const { values } = parseCommandLine(
      'memory list',
      args,
      { category: { type: 'string' }, all: { type: 'boolean' }, json: { type: 'boolean' } },
      { names: [] },
    );
    const category =
      values.category === undefined ? undefined : oneOf(ALL_MEMORY_CATEGORIES, values.category, 'memory list');
    const print = (memory: Memory) =>
      ctx.stdout.write(values.json ? `${terminalJson(memory)}\n` : `${memoryLine(memory)}\n`);
    if (values.all) {
      let count = 0;
      for await (const memory of ctx.amy().memory.list(everything({ category }))) {
        print(memory);
        count++;
      }
      if (count === 0 && !values.json) ctx.stderr.write('No memory entries.\n');
      return 0;
    }
    const page = await ctx.amy().memory.list({ category });
    page.data.forEach(print);
    if (page.data.length === 0 && !values.json) ctx.stderr.write('No memory entries.\n');
    if (page.has_more)
      ctx.stderr.write(`(first ${page.data.length} entries; \`amy memory list --all\` lists them all)\n`);
    return 0;
  },
};

export const memoryAdd: Command = {
  name: 'memory add',
  summary: 'tell Amy something to remember (goal, insight, preference or history)',
  help: `Usage: amy memory add <category> "<text>" [--json]

Writes a memory entry directly (at most 500 characters). Categories: goal, insight, preference,
history; tested_hypothesis is written only by the validator. Amy never remembers a credential: text
that looks like a key, a token, a password or a card number is refused (secret_detected, exit 2).

Options
  --json  print the new Memory object`,

  async run(args, ctx) {
    const { values, positionals } = parseCommandLine(
      'memory add',
      args,
      { json: { type: 'boolean' } },
      { names: ['category', 'text'] },
    );
    const category: WritableCategory = oneOf(MEMORY_CATEGORIES, positionals[0], 'memory add');
    const memory = await ctx.amy().memory.create({ category, text: positionals[1] });
    ctx.stdout.write(values.json ? `${terminalJson(memory)}\n` : `Added ${memoryLine(memory)}\n`);
    return 0;
  },
};

export const memoryRm: Command = {
  name: 'memory rm',
  summary: 'delete a memory entry for good',
  help: `Usage: amy memory rm <memory_id>

Deletes the entry at once and for good (there is no undo). \`amy memory list\` shows the ids.`,

  async run(args, ctx) {
    const { positionals } = parseCommandLine('memory rm', args, {}, { names: ['memory_id'] });
    await ctx.amy().memory.delete(positionals[0]);
    ctx.stdout.write(`Deleted ${terminalLine(positionals[0])}.\n`);
    return 0;
  },
};

/** Every entry, bookkeeping included, in the largest pages the API serves. */
export function everything({ category }: { category?: MemoryCategory }): MemoryListParams {
  return { category, include: TESTED_HYPOTHESIS, limit: 100 };
}

function oneOf<C extends string>(categories: readonly C[], value: string, command: string): C {
  const category = categories.find((c) => c === value);
  if (!category) {
    throw new UsageError(
      `Unknown category ${JSON.stringify(value)}: use one of ${categories.join(', ')}. ` +
        `Run \`amy ${command} --help\` for usage.`,
    );
  }
  return category;
}

const CATEGORY_WIDTH = Math.max(...ALL_MEMORY_CATEGORIES.map((c) => c.length));

function memoryLine(memory: Memory): string {
  const [id, category, created, text] = [memory.id, memory.category, memory.created_at, memory.text].map(terminalLine);
  return `${id}  ${category.padEnd(CATEGORY_WIDTH)}  ${created.slice(0, 10)}  ${text}`;
}
