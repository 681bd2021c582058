import fs from 'node:fs';
import path from 'node:path';
import {
  NotFoundError,
  type LabDeleteParams,
  type LabListParams,
  type Page,
  type Profile,
  type Workout,
} from '@amy/sdk';
import { PROFILE_SPECS, WORKOUT_TYPES, type FieldSpec } from '../../../contracts/health-records';
import { parseCommandLine } from '../args';
import type { Command, CommandContext } from '../context';
import { UsageError } from '../errors';
import { terminalJson, terminalLine } from '../terminal-text';
import { parseCount, parseNumber, parseTable } from '../data/options';
import { connectionTable, dailyTable, labTable, workoutTable, type RowTable } from '../data/table';

const LIST_DEFAULT = 100;
/** What the API's validator accepts for a profile field, for the help. */
const range = (spec: FieldSpec) => `${spec.accepted[0]}–${spec.accepted[1]}`;
/** The API's largest page. */
const PAGE_MAX = 1000;

export const dataList: Command = {
  name: 'data list',
  summary: 'list your daily summaries, workouts or lab results (oldest first)',
  help: `Usage: amy data list daily|workouts|labs [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--type T] [--biomarker B]
                     [--limit N | --all] [--json]

Lists what is stored, oldest first: the first ${LIST_DEFAULT} rows unless --limit or --all says otherwise.

Daily columns: steps; sleep, deep, rem, light, awake (minutes asleep and in each stage); rhr (resting
heart rate, bpm); hrv (heart rate variability, ms); stress (stress_management_score); azm (active
zone minutes); score (sleep_score). Workout columns: min (duration), km, kcal, avg_hr, then the
external_id. Lab results: the value in the biomarker's canonical unit, and its LOINC code. - is a
value not measured. Tables show one decimal (lab values four significant digits); --json has the
exact values.

Options
  --from <day>     the first day (included)
  --to <day>       the last day (included)
  --type <t>       workouts of this type only: ${WORKOUT_TYPES.join(', ')}
  --biomarker <b>  lab results for this biomarker only (e.g. ldl_cholesterol)
  --limit N        at most N rows (default ${LIST_DEFAULT})
  --all            every row
  --json           one row per line (NDJSON), as the API returns it`,

  async run(args, ctx) {
    const { values, positionals } = parseCommandLine(
      'data list',
      args,
      {
        from: { type: 'string' },
        to: { type: 'string' },
        type: { type: 'string' },
        biomarker: { type: 'string' },
        limit: { type: 'string' },
        all: { type: 'boolean' },
        json: { type: 'boolean' },
      },
      { names: ['table'] },
    );
    const table = parseTable(positionals[0], 'data list');
    if (values.all && values.limit !== undefined) {
      throw new UsageError('Give --limit or --all, not both. Run `amy data list --help` for usage.');
    }
    const limit = values.all ? Infinity : (parseCount(values.limit, '--limit', 'data list') ?? LIST_DEFAULT);
    const range = { from: values.from, to: values.to, limit: Math.min(limit, PAGE_MAX) };
    const out = { ctx, limit, json: values.json };
    if (values.type !== undefined && table !== 'workouts') {
      throw new UsageError('--type is for workouts only. Run `amy data list --help` for usage.');
    }
    if (values.biomarker !== undefined && table !== 'labs') {
      throw new UsageError('--biomarker is for labs only. Run `amy data list --help` for usage.');
    }
    if (table === 'daily') {
      await printRows(await ctx.amy().data.daily.list(range), dailyTable, 'No daily rows.', out);
    } else if (table === 'workouts') {
      const type = workoutType(values.type);
      await printRows(await ctx.amy().data.workouts.list({ ...range, type }), workoutTable, 'No workouts.', out);
    } else {
      // The API names the biomarkers it knows when it refuses one.
      const biomarker = values.biomarker as LabListParams['biomarker'];
      await printRows(await ctx.amy().data.labs.list({ ...range, biomarker }), labTable, 'No lab results.', out);
    }
    return 0;
  },
};

/** Up to `limit` rows from `first` on, as a table (or NDJSON); says on stderr when there were more. */
async function printRows<T>(
  first: Page<T>,
  table: RowTable<T>,
  empty: string,
  { ctx, limit, json }: { ctx: CommandContext; limit: number; json: boolean | undefined },
): Promise<void> {
  let count = 0;
  let more = false;
  let page = first;
  pages: for (;;) {
    for (const row of page.data) {
      if (count === limit) {
        more = true;
        break pages;
      }
      if (json) ctx.stdout.write(`${terminalJson(row)}\n`);
      else ctx.stdout.write(`${count === 0 ? `${table.header}\n` : ''}${terminalLine(table.format(row))}\n`);
      count++;
    }
    if (!page.hasNextPage()) break;
    if (count === limit) {
      more = true;
      break;
    }
    page = await page.getNextPage();
  }
  if (json) return;
  if (count === 0) ctx.stderr.write(`${empty}\n`);
  if (more) ctx.stderr.write(`(first ${count} rows; --limit N or --all for more, \`amy data export\` for a file)\n`);
}

function workoutType(value: string | undefined): Workout['type'] | undefined {
  if (value === undefined) return undefined;
  const type = WORKOUT_TYPES.find((t) => t === value);
  if (!type) {
    throw new UsageError(
      `Unknown workout type ${JSON.stringify(value)}: use one of ${WORKOUT_TYPES.join(', ')}. ` +
        'Run `amy data list --help` for usage.',
    );
  }
  return type;
}

export const dataDelete: Command = {
  name: 'data delete',
  summary: 'delete daily summaries or lab results in a date range, or one workout',
  help: `Usage: amy data delete daily --from YYYY-MM-DD --to YYYY-MM-DD [--json]
       amy data delete labs --from YYYY-MM-DD --to YYYY-MM-DD [--biomarker B] [--json]
       amy data delete workout <external_id> [--json]

Deletes at once and for good (there is no undo; \`amy data export\` first keeps a copy).
daily: every day from --from to --to, both included, and says how many there were.
labs: every lab result on those days (of one biomarker with --biomarker), and how many.
workout: the workout with this external_id (\`amy data list workouts\` shows them); exit 2 when
there is none.

Options
  --from <day>     the first day to delete (daily, labs)
  --to <day>       the last day to delete (daily, labs)
  --biomarker <b>  only this biomarker's results (labs)
  --json           print { deleted } (daily, labs) or { deleted: external_id } (workout)`,

  async run(args, ctx) {
    const { values, positionals } = parseCommandLine(
      'data delete',
      args,
      {
        from: { type: 'string' },
        to: { type: 'string' },
        biomarker: { type: 'string' },
        json: { type: 'boolean' },
      },
      { names: ['daily|labs|workout', 'external_id'], min: 1 },
    );
    const [what, externalId] = positionals;
    if (values.biomarker !== undefined && what !== 'labs') {
      throw new UsageError('--biomarker is for labs only. Run `amy data delete --help` for usage.');
    }
    if (what === 'daily' || what === 'labs') {
      if (externalId !== undefined) {
        throw new UsageError(`Unexpected argument: ${externalId}. Run \`amy data delete --help\` for usage.`);
      }
      if (values.from === undefined || values.to === undefined) {
        throw new UsageError(
          `amy data delete ${what} needs both --from and --to (the days to delete, both included). ` +
            'Run `amy data delete --help` for usage.',
        );
      }
      const range = { from: values.from, to: values.to };
      const deleted =
        what === 'daily'
          ? await ctx.amy().data.daily.delete(range)
          : await ctx.amy().data.labs.delete({ ...range, biomarker: values.biomarker as LabDeleteParams['biomarker'] });
      const rows = what === 'daily' ? `daily row${deleted === 1 ? '' : 's'}` : `lab result${deleted === 1 ? '' : 's'}`;
      ctx.stdout.write(
        values.json
          ? `${JSON.stringify({ deleted })}\n`
          : `Deleted ${deleted} ${rows} from ${values.from} to ${values.to}.\n`,
      );
      return 0;
    }
    if (what === 'workout' || what === 'workouts') {
      if (values.from !== undefined || values.to !== undefined) {
        throw new UsageError('--from and --to are for daily rows and labs. Run `amy data delete --help` for usage.');
      }
      if (externalId === undefined) {
        throw new UsageError('Missing <external_id>. Run `amy data delete --help` for usage.');
      }
      await ctx.amy().data.workouts.delete(externalId);
      ctx.stdout.write(
        values.json ? `${terminalJson({ deleted: externalId })}\n` : `Deleted workout ${terminalLine(externalId)}.\n`,
      );
      return 0;
    }
    throw new UsageError(
      `amy data delete takes daily, labs or workout, not ${JSON.stringify(what)}. Run \`amy data delete --help\` for usage.`,
    );
  },
};

export const dataProfile: Command = {
  name: 'data profile',
  summary: 'show your profile (sex, birth year, height, weight)',
  help: `Usage: amy data profile [--json]

Shows the profile Amy reads your data with: sex, birth_year, height_cm, weight_kg. Without one,
says so (and --json prints null). \`amy data profile set\` writes it.

Options
  --json  print the Profile object as the API returns it (null when none)`,

  async run(args, ctx) {
    const { values } = parseCommandLine('data profile', args, { json: { type: 'boolean' } }, { names: [] });
    const profile = await readProfile(ctx);
    if (values.json) ctx.stdout.write(`${terminalJson(profile)}\n`);
    else if (profile) printProfile(ctx, profile);
    else ctx.stderr.write('No profile is stored; `amy data profile set` writes one.\n');
    return 0;
  },
};

export const dataProfileSet: Command = {
  name: 'data profile set',
  summary: 'write your profile, or change part of it (--file: from an export)',
  help: `Usage: amy data profile set [--sex female|male] [--birth-year YYYY] [--height-cm N] [--weight-kg N] [--json]
       amy data profile set --file <profile.json> [flags] [--json]

Writes the profile. Flags left out keep the values stored, so \`amy data profile set --weight-kg 71\`
changes the weight alone; the first profile needs all four. --file writes the profile a file holds
(the profile.json of \`amy data export\`), the flags given changing it. The API judges the values
(birth year ${PROFILE_SPECS.birth_year.accepted[0]} to this year, height ${range(PROFILE_SPECS.height_cm)} cm, weight ${range(PROFILE_SPECS.weight_kg)} kg) and names the one
it refuses (exit 2).

Options
  --sex <s>          female or male
  --birth-year YYYY  the year of birth
  --height-cm N      height in centimetres
  --weight-kg N      weight in kilograms
  --file <file>      the profile as a JSON object, as \`amy data profile --json\` prints it
  --json             print the Profile object as stored`,

  async run(args, ctx) {
    const { values } = parseCommandLine(
      'data profile set',
      args,
      {
        sex: { type: 'string' },
        'birth-year': { type: 'string' },
        'height-cm': { type: 'string' },
        'weight-kg': { type: 'string' },
        file: { type: 'string' },
        json: { type: 'boolean' },
      },
      { names: [] },
    );
    const given: Partial<Record<keyof Profile, unknown>> = {
      sex: values.sex,
      birth_year: parseNumber(values['birth-year'], '--birth-year', 'data profile set'),
      height_cm: parseNumber(values['height-cm'], '--height-cm', 'data profile set'),
      weight_kg: parseNumber(values['weight-kg'], '--weight-kg', 'data profile set'),
    };
    const flags = Object.entries(given).filter(([, v]) => v !== undefined);
    if (flags.length === 0 && values.file === undefined) {
      throw new UsageError(
        'Give --file or at least one of --sex, --birth-year, --height-cm, --weight-kg. ' +
          'Run `amy data profile set --help` for usage.',
      );
    }
    const base =
      values.file !== undefined
        ? await readProfileFile(values.file, ctx)
        : flags.length === PROFILE_FLAGS.length
          ? null
          : await readProfile(ctx);
    const profile: Record<string, unknown> = { ...base, ...Object.fromEntries(flags) };
    const missing = PROFILE_FLAGS.filter(([field]) => profile[field] === undefined).map(([, flag]) => flag);
    if (missing.length > 0) {
      const why =
        values.file !== undefined
          ? `${values.file} lacks`
          : 'No profile is stored yet, so the first needs all four: missing';
      throw new UsageError(`${why} ${missing.join(', ')}. Run \`amy data profile set --help\` for usage.`);
    }
    // The API judges each value (sex included) and names the one it refuses.
    const written = await ctx.amy().data.profile.put(profile as Profile);
    if (values.json) ctx.stdout.write(`${terminalJson(written)}\n`);
    else {
      ctx.stdout.write('Profile written.\n');
      printProfile(ctx, written);
    }
    return 0;
  },
};

/** A profile as a JSON object in a file (`profile.json` of an export); `null` there means there is none to write. */
async function readProfileFile(file: string, ctx: CommandContext): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(await fs.promises.readFile(path.resolve(ctx.cwd, file), 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(`Cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : (code ?? 'not valid JSON')}.`);
  }
  if (value === null) throw new UsageError(`${file} holds null: no profile was exported, so there is none to write.`);
  if (typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`${file} does not hold a JSON object.`);
  return value as Record<string, unknown>;
}

const PROFILE_FLAGS: Array<[keyof Profile, string]> = [
  ['sex', '--sex'],
  ['birth_year', '--birth-year'],
  ['height_cm', '--height-cm'],
  ['weight_kg', '--weight-kg'],
];

/** The stored profile, or null when none was written. */
export async function readProfile(ctx: CommandContext): Promise<Profile | null> {
  try {
    return await ctx.amy().data.profile.get();
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    throw err;
  }
}

function printProfile(ctx: CommandContext, profile: Profile): void {
  for (const [field] of PROFILE_FLAGS)
    ctx.stdout.write(`${field.padEnd(10)}  ${terminalLine(String(profile[field]))}\n`);
}

/** The statuses in which no data comes until the user reconnects through Terra's widget. */
const RECONNECT = new Set(['reauth_required', 'revoked', 'error']);

export const dataConnections: Command = {
  name: 'data connections',
  summary: 'list the providers you connected through Terra (Garmin, Oura, Whoop, …) and their status',
  help: `Usage: amy data connections [--json]

Lists your connections through Terra, by provider: its status, when it was first connected and when it
last changed (UTC, to the minute), and Terra's id for it. Statuses: connected (its data comes in);
reauth_required, revoked, error (no data comes: reconnect through Terra's widget); disconnected (you
removed it). Connections are made through Terra's widget, not here (docs/terra.md).

Options
  --json  one connection per line (NDJSON), as the API returns it`,

  async run(args, ctx) {
    const { values } = parseCommandLine('data connections', args, { json: { type: 'boolean' } }, { names: [] });
    const connections = await ctx.amy().data.connections.list();
    if (values.json) {
      for (const connection of connections) ctx.stdout.write(`${terminalJson(connection)}\n`);
      return 0;
    }
    if (connections.length === 0) {
      ctx.stderr.write("No connections. A provider is connected through Terra's widget: see docs/terra.md.\n");
      return 0;
    }
    ctx.stdout.write(`${connectionTable.header}\n`);
    for (const connection of connections) ctx.stdout.write(`${terminalLine(connectionTable.format(connection))}\n`);
    if (connections.some((connection) => RECONNECT.has(connection.status))) {
      ctx.stderr.write(
        "No data comes from a connection in reauth_required, revoked or error: reconnect it through Terra's widget.\n",
      );
    }
    return 0;
  },
};
