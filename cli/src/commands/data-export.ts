import fs from 'node:fs';
import path from 'node:path';
import type { Page } from '@amy/sdk';
import { parseCommandLine } from '../args';
import type { Command } from '../context';
import { EXIT, UsageError } from '../errors';
import { terminalJson } from '../terminal-text';
import { AtomicFile } from '../data/atomic-file';
import { Progress } from '../data/progress';
import { readProfile } from './data';

/** The API's largest page: the fewest requests for a full read. */
const PAGE_MAX = 1000;
const FILES = {
  daily: 'daily.jsonl',
  workouts: 'workouts.jsonl',
  labs: 'labs.jsonl',
  profile: 'profile.json',
} as const;

export const dataExport: Command = {
  name: 'data export',
  summary: 'write all your health data to a directory (daily, workouts, labs, profile)',
  help: `Usage: amy data export <dir> [--force] [--json]

Reads back everything stored for you, every page, and writes it to <dir> (created if missing):
  daily.jsonl     one daily row per line, oldest first, every metric (null: not measured)
  workouts.jsonl  one workout per line, oldest first
  labs.jsonl      one lab result per line, oldest first: { date, biomarker, value, unit }, the
                  value in the biomarker's canonical unit (the LOINC code, which an upload does
                  not take, is left out: the biomarker names it)
  profile.json    the profile, or null when none was written
These are the API's own field names, so \`amy data upload daily|workouts|labs <dir>/<file>\` and
\`amy data profile set --file <dir>/profile.json\` store the same data again.

Existing files are never overwritten without --force; amy checks before reading anything. Each
file is written under a temporary name and renamed once complete, all four at the end, so an
interrupted export (Ctrl-C: exit 130) leaves no partial file under these names. The files are
readable by you only.
On a terminal, progress shows on stderr.

Options
  --force  replace files of these names in <dir>
  --json   one line per file written: { file, rows } (profile.json: { file, profile: true|false })`,

  async run(args, ctx) {
    const { values, positionals } = parseCommandLine(
      'data export',
      args,
      { force: { type: 'boolean' }, json: { type: 'boolean' } },
      { names: ['dir'] },
    );
    const dir = path.resolve(ctx.cwd, positionals[0]);
    if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory()) {
      throw new UsageError(`${positionals[0]} exists and is not a directory.`);
    }
    const targets = Object.values(FILES).map((name) => path.join(dir, name));
    const existing = targets.filter((target) => fs.existsSync(target));
    if (existing.length > 0 && !values.force) {
      throw new UsageError(
        `${existing.map((f) => path.basename(f)).join(', ')} already ${existing.length === 1 ? 'exists' : 'exist'} ` +
          `in ${dir}; nothing was written. --force replaces ${existing.length === 1 ? 'it' : 'them'}.`,
      );
    }
    fs.mkdirSync(dir, { recursive: true });

    const files: AtomicFile[] = [];
    const progress = new Progress(ctx.stderr);
    // Ctrl-C: the temporary files go, the final names are untouched (the old files, with --force).
    const onInterrupt = () => {
      files.forEach((file) => file.discard());
      progress.clear();
      ctx.stderr.write('Interrupted; nothing was written.\n');
      ctx.exit(EXIT.interrupted);
    };
    ctx.signals.on('SIGINT', onInterrupt);
    try {
      const amy = ctx.amy();
      const open = async (name: string) => {
        const file = await AtomicFile.create(path.join(dir, name));
        files.push(file);
        return file;
      };
      const daily = await writeLines(await open(FILES.daily), await amy.data.daily.list({ limit: PAGE_MAX }), (n) =>
        progress.show(`Exporting daily rows: ${n}`),
      );
      const workouts = await writeLines(
        await open(FILES.workouts),
        await amy.data.workouts.list({ limit: PAGE_MAX }),
        (n) => progress.show(`Exporting workouts: ${n}`),
      );
      // As uploads take them: the LOINC code is the biomarker's, and a row that carries it is refused.
      const labPages = await amy.data.labs.list({ limit: PAGE_MAX });
      const labs = await writeLines(
        await open(FILES.labs),
        labPages,
        (n) => progress.show(`Exporting lab results: ${n}`),
        ({ date, biomarker, value, unit }) => ({ date, biomarker, value, unit }),
      );
      const profile = await readProfile(ctx);
      const profileFile = await open(FILES.profile);
      await profileFile.write(`${JSON.stringify(profile, null, 2)}\n`);
      for (const file of files) await file.commit();
      progress.clear();

      const [dailyPath, workoutsPath, labsPath, profilePath] = targets;
      if (values.json) {
        ctx.stdout.write(`${terminalJson({ file: dailyPath, rows: daily })}\n`);
        ctx.stdout.write(`${terminalJson({ file: workoutsPath, rows: workouts })}\n`);
        ctx.stdout.write(`${terminalJson({ file: labsPath, rows: labs })}\n`);
        ctx.stdout.write(`${terminalJson({ file: profilePath, profile: profile !== null })}\n`);
      } else {
        ctx.stdout.write(
          `Exported to ${dir}:\n` +
            `  ${FILES.daily.padEnd(14)}  ${daily} daily row${daily === 1 ? '' : 's'}\n` +
            `  ${FILES.workouts.padEnd(14)}  ${workouts} workout${workouts === 1 ? '' : 's'}\n` +
            `  ${FILES.labs.padEnd(14)}  ${labs} lab result${labs === 1 ? '' : 's'}\n` +
            `  ${FILES.profile.padEnd(14)}  ${profile ? 'the profile' : 'null (no profile is stored)'}\n`,
        );
      }
      return EXIT.completed;
    } catch (err) {
      progress.clear();
      files.forEach((file) => file.discard());
      throw err;
    } finally {
      ctx.signals.off('SIGINT', onInterrupt);
    }
  },
};

/** Every page from `first` on into `file`, a JSON line per row (as `shape` makes it); the number of rows. */
async function writeLines<T>(
  file: AtomicFile,
  first: Page<T>,
  progress: (rows: number) => void,
  shape: (row: T) => unknown = (row) => row,
): Promise<number> {
  let rows = 0;
  for (let page = first; ; page = await page.getNextPage()) {
    if (page.data.length > 0) await file.write(page.data.map((row) => `${JSON.stringify(shape(row))}\n`).join(''));
    rows += page.data.length;
    progress(rows);
    if (!page.hasNextPage()) return rows;
  }
}
