/**
 * Where `npm run bench:pacing` keeps its results (./run-records.ts): each run's record as a file of its own
 * under docs/benchmarks/pacing/, and the latest verdicts in docs/benchmarks.md's section, between the markers
 * that section places.
 */
import { listRunRecords as listRecords, writeGeneratedSection, writeRunRecord as writeRecord } from './run-records';

/** Writes the run's record; returns its path. */
export const writeRunRecord = (date: string, record: string): string => writeRecord('pacing', date, record);

/** Every record's file name, newest first. */
export const listRunRecords = (): string[] => listRecords('pacing');

/** Replaces the generated part of docs/benchmarks.md's section; returns the file's path. */
export const writeDocSection = (generated: string): string => writeGeneratedSection('npm run bench:pacing', generated);
