/**
 * The reply to a question about the user's data when the turn's snapshot has none of the rows it needs
 * (docs/design.md#no-data-to-compute-from). Whether there is data is known from the snapshot's row counts,
 * so the reply is decided in code, with no model call: it says which tables are empty and how to fill them,
 * and states no number (its fact-check finds nothing to check, and the fact sheet is empty). Lab results the
 * turn left out (`include_biomarkers: false`) are not called missing: the reply says they were left out at
 * the user's request (docs/design.md#lab-results-left-out-of-a-turn).
 */
import type { TurnDataCounts } from '../../platform/health-data/snapshot';

/** The user's health data tables, in the order the reply lists them. */
type DataTable = 'daily' | 'workouts' | 'labs' | 'profile';

const ALL_TABLES: readonly DataTable[] = ['daily', 'workouts', 'labs', 'profile'];

/**
 * What a Data Science run computes from and its findings are validated on: the sandbox's `summary_df`,
 * `activities_df` and `labs_df`, each in the checked path (docs/design.md#every-table-in-the-checked-path).
 */
export const ANALYSED_TABLES: readonly DataTable[] = ['daily', 'workouts', 'labs'];

/** What the Investigator's digest and its tests are built from: without daily summaries it has nothing to scan. */
export const INVESTIGATED_TABLES: readonly DataTable[] = ['daily'];

const TABLE_NAMES: Record<DataTable, string> = {
  daily: 'daily summaries',
  workouts: 'workouts',
  labs: 'lab results',
  profile: 'profile',
};

/** How each table is filled: the API route and the CLI command (docs/api.md#health-data). */
const HOW_TO_UPLOAD: Record<DataTable, string> = {
  daily:
    '- **Daily summaries** (sleep, resting heart rate, HRV, steps and the other daily metrics): ' +
    '`POST /v1/data/daily`, or `amy data upload daily <file>`',
  workouts: '- **Workouts**: `POST /v1/data/workouts`, or `amy data upload workouts <file>`',
  labs: '- **Lab results** (rows or a FHIR Bundle): `POST /v1/data/labs`, or `amy data upload labs <file>`',
  profile: '- **Profile** (sex, birth year, height, weight): `PUT /v1/data/profile`, or `amy data profile set`',
};

const DOCS_POINTER =
  'The fields of each table are in the health data section of the API docs (`docs/api.md#health-data`); ' +
  'once your data is in, ask me again.';

const rowsOf = (counts: TurnDataCounts, table: DataTable): boolean =>
  table === 'profile' ? counts.profile : counts[table] > 0;

/**
 * Whether the snapshot has no rows of `table` because the turn left them out (`include_biomarkers: false`), not
 * because there are none: nothing is computed from it, and no reply asks for it to be uploaded.
 */
export const withheld = (counts: TurnDataCounts, table: DataTable): boolean => table === 'labs' && counts.labsWithheld;

/**
 * Said where the user's lab results would have been used when the turn left them out: why their own values are
 * not in the answer, and how to have them used. Like the other notes, it states no number.
 */
const LABS_WITHHELD_NOTE =
  "Your lab results were left out of this turn at your request (`include_biomarkers: false`), so I haven't " +
  'looked at your own values. Ask again with biomarkers included (the default; `amy ask` without ' +
  '`--no-biomarkers`) to have them used.';

/** True when none of `tables` has a row in the snapshot: there is nothing to compute the answer from. */
export const lacksData = (counts: TurnDataCounts, tables: readonly DataTable[]): boolean =>
  tables.every((table) => !rowsOf(counts, table));

const list = (names: string[], conjunction: 'and' | 'or'): string =>
  names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} ${conjunction} ${names[names.length - 1]}`;

/**
 * The reply for a question that needed `needed` when the snapshot holds `counts`: no data at all, or the
 * needed tables empty (with what the user did upload), then how to upload the empty ones and where the
 * docs are. Its only digits are in the routes (`/v1/…`), which are not numbers, so it has nothing to check.
 */
export function noDataReply(counts: TurnDataCounts, needed: readonly DataTable[]): string {
  const present = ALL_TABLES.filter((table) => rowsOf(counts, table));
  const missing = needed.filter((table) => !rowsOf(counts, table) && !withheld(counts, table));
  const withheldNote = needed.some((table) => withheld(counts, table)) ? [LABS_WITHHELD_NOTE] : [];
  if (missing.length === 0) {
    // All the question needed was the lab results the user left out: there is nothing to upload.
    return `I can't answer that from your own lab results, and I won't guess a number. ${LABS_WITHHELD_NOTE}`;
  }
  // With the labs left out, an empty snapshot does not mean the user has uploaded nothing.
  const nothingUploaded = present.length === 0 && !counts.labsWithheld;
  const missingNames = list(
    missing.map((t) => TABLE_NAMES[t]),
    'or',
  );
  const presentNames = list(
    present.map((t) => TABLE_NAMES[t]),
    'and',
  );
  const opening = nothingUploaded
    ? "I can't answer that from your data yet: you haven't uploaded any health data, so there is nothing " +
      "of yours to compute from, and I won't guess a number."
    : `I can't answer that from your data yet: you have no ${missingNames} uploaded, which is what this ` +
      `needs, and I won't guess a number.` +
      (present.length > 0 ? ` (What you have uploaded so far: ${presentNames}.)` : '');
  const toUpload = nothingUploaded ? ALL_TABLES : missing;
  return [
    opening,
    ...withheldNote,
    'To add your data, upload:',
    toUpload.map((t) => HOW_TO_UPLOAD[t]).join('\n'),
    DOCS_POINTER,
  ].join('\n\n');
}

/**
 * Words a user writes for their lab results or one of the biomarkers the service stores
 * (contracts/lab-biomarkers.ts), after "my" ("my latest LDL", "my cholesterol", "my labs").
 */
const OWN_LABS =
  /\bmy\s+(?:\w+\s+){0,3}?(?:labs?\b|lab results?|blood (?:work|tests?|sugar)|ldl|hdl|cholesterol|triglycerides|glucose|hba1c|a1c|tsh|thyroid|vitamin d\b|ferritin|(?:hs-?)?crp\b)/i;

/** Whether the user's message asks about their own lab results. */
export const asksAboutOwnLabs = (message: string): boolean => OWN_LABS.test(message);

/**
 * Said after an answer to a question about the user's own labs when the snapshot holds none: the answer
 * may give the clinical context, but not their result, and this says why and how to add them.
 */
export const NO_LABS_NOTE =
  "You have no lab results uploaded yet, so I couldn't look up your own. " +
  'To add them: `POST /v1/data/labs` (rows or a FHIR Bundle), or `amy data upload labs <file>`; ' +
  'the fields are in the health data section of the API docs (`docs/api.md#health-data`).';

/**
 * The note after an answer to a question about the user's own labs, from the snapshot's counts: none when the
 * snapshot holds lab results; that they were left out at the user's request when the turn withheld them;
 * otherwise that none are uploaded, and how to add them.
 */
export function ownLabsNote(counts: TurnDataCounts): string | null {
  if (counts.labs > 0) return null;
  return counts.labsWithheld ? LABS_WITHHELD_NOTE : NO_LABS_NOTE;
}
