/**
 * Where the benches keep their results. Each run's record is a file of its own under
 * docs/benchmarks/<bench>/, named by the run's time (`:` written `-`, so that every file system takes the
 * name) and never rewritten; docs/benchmarks.md holds, per bench, only the part that bench generates between
 * its markers: the latest verdicts and the links to every record. So the page stays short however many runs
 * are recorded, and the hand-written method and targets around each block are left alone.
 */
import fs from 'node:fs';
import path from 'node:path';

/** A bench's folder under docs/benchmarks/. */
export type BenchRecords = 'bench' | 'roles' | 'load' | 'pacing';

const DOCS_DIR = path.resolve(__dirname, '..', '..', 'docs');
const DOC_PATH = path.join(DOCS_DIR, 'benchmarks.md');
const recordsDir = (bench: BenchRecords) => path.join(DOCS_DIR, 'benchmarks', bench);

/** The record's file name for a run at `date` (ISO 8601, to the second). */
const recordFileName = (date: string) => `${date.replace(/:/g, '-')}.md`;

/** Writes the run's record; returns its path. */
export function writeRunRecord(bench: BenchRecords, date: string, record: string): string {
  fs.mkdirSync(recordsDir(bench), { recursive: true });
  const file = path.join(recordsDir(bench), recordFileName(date));
  fs.writeFileSync(file, record);
  return file;
}

/** Every record's file name, newest first (the names sort as the times they are named by). */
export function listRunRecords(bench: BenchRecords): string[] {
  if (!fs.existsSync(recordsDir(bench))) return [];
  return fs
    .readdirSync(recordsDir(bench))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .reverse();
}

/** A link from docs/benchmarks.md to one record, labelled by the record's time. */
export const recordLink = (bench: BenchRecords, file: string): string =>
  `[${file.replace(/\.md$/, '')}](benchmarks/${bench}/${file})`;

/**
 * Replaces the section of docs/benchmarks.md that `command` generates, between markers of its own
 * (`<!-- BEGIN GENERATED: <command> -->` … `<!-- END GENERATED: <command> -->`), which the hand-written
 * text places; appended at the end when they are missing. Returns the file's path.
 */
export function writeGeneratedSection(command: string, generated: string): string {
  const begin = `<!-- BEGIN GENERATED: ${command} -->`;
  const end = `<!-- END GENERATED: ${command} -->`;
  const section = `${begin}\n\n${generated}\n\n${end}`;
  const existing = fs.readFileSync(DOC_PATH, 'utf8');
  const from = existing.indexOf(begin);
  const to = existing.indexOf(end);
  const updated =
    from !== -1 && to > from
      ? existing.slice(0, from) + section + existing.slice(to + end.length)
      : `${existing.trimEnd()}\n\n${section}\n`;
  fs.writeFileSync(DOC_PATH, updated);
  return DOC_PATH;
}
