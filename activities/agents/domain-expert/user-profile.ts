/**
 * The Domain Expert's `user_profile` tool: who the user is (sex, age, height, weight) and their latest
 * result for each lab biomarker, read from the turn's snapshot of the user's data. A turn that left the labs
 * out (`include_biomarkers: false`) has none in its snapshot, and the tool says why.
 */
import type { Pool } from 'pg';
import { z } from 'zod';
import { readTurnHealthData, type TurnDataRef } from '../../../platform/health-data/snapshot';
import { defineTool } from './tool-contract';

interface LatestBiomarker {
  name: string;
  value: number;
  unit: string;
  taken_on: string;
}

export interface UserProfileResult {
  profile: {
    sex: string;
    /** This calendar year minus the birth year, so it may run a year ahead of the true age. */
    age: number;
    birth_year: number;
    height_cm: number;
    weight_kg: number;
  } | null;
  latest_biomarkers: LatestBiomarker[];
  note?: string;
}

export async function readUserProfile(pool: Pool, turn: TurnDataRef, now: Date): Promise<UserProfileResult> {
  const { profile, labs, labsWithheld } = await readTurnHealthData(pool, turn);
  const latest = new Map<string, LatestBiomarker>();
  for (const lab of labs) {
    if (!latest.has(lab.name)) {
      latest.set(lab.name, { name: lab.name, value: lab.value, unit: lab.unit, taken_on: lab.taken_on });
    }
  }
  const result: UserProfileResult = {
    profile: profile && {
      sex: profile.sex,
      age: now.getUTCFullYear() - profile.birth_year,
      birth_year: profile.birth_year,
      height_cm: profile.height_cm,
      weight_kg: profile.weight_kg,
    },
    latest_biomarkers: [...latest.values()].sort((a, b) => a.name.localeCompare(b.name)),
  };
  // The user turned the labs off for this turn: the tool says so rather than that there are none.
  if (labsWithheld) result.note = 'lab results withheld: the user excluded biomarkers from this turn';
  else if (!profile && latest.size === 0)
    result.note = 'no profile: this user has no health profile and no lab results';
  else if (!profile) result.note = 'no profile: sex and age are unknown';
  else if (latest.size === 0) result.note = 'no lab results on file';
  return result;
}

export const userProfileTool = defineTool({
  name: 'user_profile',
  description:
    "The user's profile (sex, age, height, weight) and their latest result for each lab biomarker, with its date. Takes no input.",
  input: z.object({}).strict(),
  run: (_input, { pool, turnId, userId, now }) => readUserProfile(pool, { turnId, userId }, now),
});
