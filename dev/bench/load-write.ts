/**
 * Where `npm run load` keeps its results (./run-records.ts): each run's record as a file of its own under
 * docs/benchmarks/load/, and the latest run's table in docs/benchmarks.md's section, between the markers that
 * section places. Earlier records are never rewritten.
 */
import { listRunRecords as listRecords, writeGeneratedSection, writeRunRecord as writeRecord } from './run-records';

/** Writes the run's record; returns its path. */
export const writeRunRecord = (date: string, record: string): string => writeRecord('load', date, record);

/** Every record's file name, newest first. */
export const listRunRecords = (): string[] => listRecords('load');

/** Replaces the generated part of docs/benchmarks.md's section; returns the file's path. */
export const writeDocSection = (generated: string): string => writeGeneratedSection('npm run load', generated);
