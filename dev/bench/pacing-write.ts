/**
 * Where `npm run bench:pacing` keeps its results: each run's record as a file of its own under
 * docs/benchmarks/pacing/ (named by its time, `:` written `-` so that every file system takes the name),
 * and the latest verdicts in docs/benchmarks.md's section, between the markers that section places.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeGeneratedSection } from './report';

const RECORDS_DIR = path.resolve(__dirname, '..', '..', 'docs', 'benchmarks', 'pacing');

/** The record's file name for a run at `date` (ISO 8601, to the second). */
const recordFileName = (date: string) => `${date.replace(/:/g, '-')}.md`;

/** Writes the run's record; returns its path. */
export function writeRunRecord(date: string, record: string): string {
  fs.mkdirSync(RECORDS_DIR, { recursive: true });
  const file = path.join(RECORDS_DIR, recordFileName(date));
  fs.writeFileSync(file, record);
  return file;
}

/** Every record's file name, newest first (the names sort as the times they are named by). */
export function listRunRecords(): string[] {
  if (!fs.existsSync(RECORDS_DIR)) return [];
  return fs
    .readdirSync(RECORDS_DIR)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .reverse();
}

/** Replaces the generated part of docs/benchmarks.md's section; returns the file's path. */
export const writeDocSection = (generated: string): string => writeGeneratedSection('npm run bench:pacing', generated);
