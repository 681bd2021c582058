/**
 * The Health data resource (docs/api.md#health-data): a user's daily summaries, workouts, lab results and
 * profile, sent and read by the client's backend. These schemas check each request's shape (strict: an
 * unknown field is refused), describe the responses and generate the OpenAPI document. What a value may be
 * (ranges, whole numbers, sleep stages, days not in the future, one row per day, a lab unit that converts)
 * is checked after them by the one validator the CSV import shares, platform/health-data/validate.ts; the
 * document states its ranges from the same tables (./health-records.ts, and for labs ./lab-biomarkers.ts),
 * as descriptions and as minimum, maximum and integer.
 */
import { z } from 'zod';
import {
  DAILY_METRICS,
  METRIC_SPECS,
  PROFILE_SPECS,
  SEXES,
  WORKOUT_SPECS,
  WORKOUT_TYPES,
  parseIsoDate,
  type DailyMetric,
  type FieldSpec,
} from './health-records';
import { LAB_BIOMARKER_NAMES } from './lab-biomarkers';
import { pageCursorSchema, pageSchema } from './pagination';

/**
 * Rows one request may write. 500 full daily rows are about 150 KB of JSON, well within the request body
 * limit (AMY_BODY_LIMIT_BYTES, 256 KiB by default), so a batch at the cap is never refused for its size.
 */
export const MAX_DATA_ROWS_PER_REQUEST = 500;
const DATA_PAGE_SIZE_DEFAULT = 100;
const DATA_PAGE_SIZE_MAX = 1000;

/** What the validator accepts for a numeric field, said in words for the document. */
const accepted = (spec: FieldSpec) =>
  `${spec.integer ? 'A whole number' : 'A number'} from ${spec.accepted[0]} to ${spec.accepted[1]}.`;

/**
 * The validator's rule for a number, stated in the document (minimum, maximum, integer) so that clients
 * and generated requests see it; the zod schema itself checks only that it is a number, and the
 * validator alone enforces the rule, with one message for the API and the CSV import.
 */
const documented = (spec: FieldSpec, description: string) => ({
  description,
  minimum: spec.accepted[0],
  maximum: spec.accepted[1],
  ...(spec.integer ? { type: 'integer' } : {}),
});

/** A number as sent (the validator judges its value); null or absent when not measured. */
const measured = (spec: FieldSpec) =>
  z
    .number()
    .nullable()
    .optional()
    .meta(documented(spec, `${accepted(spec)} Null when not measured.`));

const dayText = z.string().meta({ description: 'A calendar day, YYYY-MM-DD, not after today (UTC).', format: 'date' });

const dayQuery = z
  .string()
  .refine((day) => parseIsoDate(day) !== null, { error: 'must be a calendar date in YYYY-MM-DD form' })
  .meta({ format: 'date' });

const rowsOf = <T extends z.ZodType>(row: T) =>
  z
    .array(row)
    .min(1)
    .max(MAX_DATA_ROWS_PER_REQUEST, { error: `must hold at most ${MAX_DATA_ROWS_PER_REQUEST} rows` })
    .describe(`1 to ${MAX_DATA_ROWS_PER_REQUEST} rows; if any row is refused, none is stored.`);

const dataPageLimitSchema = z.coerce
  .number()
  .int()
  .min(1)
  .max(DATA_PAGE_SIZE_MAX)
  .default(DATA_PAGE_SIZE_DEFAULT)
  .describe(`Page size, 1 to ${DATA_PAGE_SIZE_MAX}.`);

/** The result of an upsert: rows new to the user, and rows that replaced ones they had. */
export const upsertResultSchema = z.object({ inserted: z.number().int(), updated: z.number().int() });
export type UpsertResult = z.infer<typeof upsertResultSchema>;

// Daily summaries ------------------------------------------------------------------------------------

const metricShape = Object.fromEntries(DAILY_METRICS.map((metric) => [metric, measured(METRIC_SPECS[metric])])) as {
  [M in DailyMetric]: ReturnType<typeof measured>;
};

const dailyRowInputSchema = z.object({ date: dayText, ...metricShape }).strict();

export const upsertDailyRequestSchema = z.object({ rows: rowsOf(dailyRowInputSchema) }).strict();
export type UpsertDailyRequest = z.infer<typeof upsertDailyRequestSchema>;

const dailyRowSchema = z.object({
  date: z.string(),
  ...(Object.fromEntries(DAILY_METRICS.map((metric) => [metric, z.number().nullable()])) as {
    [M in DailyMetric]: z.ZodNullable<z.ZodNumber>;
  }),
});
export type DailySummary = z.infer<typeof dailyRowSchema>;
export const dailyListSchema = pageSchema(dailyRowSchema);
export type DailyList = z.infer<typeof dailyListSchema>;

export const listDailyQuerySchema = z
  .object({
    from: dayQuery.optional().describe('The first day to list (included), YYYY-MM-DD.'),
    to: dayQuery.optional().describe('The last day to list (included), YYYY-MM-DD.'),
    limit: dataPageLimitSchema,
    cursor: pageCursorSchema,
  })
  .strict();
export type ListDailyQuery = z.infer<typeof listDailyQuerySchema>;

export const deleteDailyQuerySchema = z
  .object({
    from: dayQuery.describe('The first day to delete (included), YYYY-MM-DD.'),
    to: dayQuery.describe('The last day to delete (included), YYYY-MM-DD.'),
  })
  .strict();
export type DeleteDailyQuery = z.infer<typeof deleteDailyQuerySchema>;

export const deleteDailyResultSchema = z.object({ deleted: z.number().int() });
export type DeleteDailyResult = z.infer<typeof deleteDailyResultSchema>;

// Workouts -------------------------------------------------------------------------------------------

/** The client's own id for a workout: 1 to 255 visible ASCII characters. */
export const externalIdSchema = z
  .string()
  .regex(/^[\x21-\x7E]{1,255}$/, { error: 'must be 1 to 255 visible ASCII characters' })
  .describe('Your own id for the workout, 1 to 255 visible ASCII characters; the same id again updates it.');

const workoutInputSchema = z
  .object({
    external_id: externalIdSchema,
    date: dayText,
    type: z.enum(WORKOUT_TYPES),
    duration_minutes: z
      .number()
      .meta(documented(WORKOUT_SPECS.duration_minutes, accepted(WORKOUT_SPECS.duration_minutes))),
    distance_km: measured(WORKOUT_SPECS.distance_km),
    calories: measured(WORKOUT_SPECS.calories),
    avg_heart_rate: measured(WORKOUT_SPECS.avg_heart_rate),
  })
  .strict();

export const upsertWorkoutsRequestSchema = z.object({ rows: rowsOf(workoutInputSchema) }).strict();
export type UpsertWorkoutsRequest = z.infer<typeof upsertWorkoutsRequestSchema>;

const workoutSchema = z.object({
  external_id: z.string(),
  date: z.string(),
  type: z.enum(WORKOUT_TYPES),
  duration_minutes: z.number(),
  distance_km: z.number().nullable(),
  calories: z.number().nullable(),
  avg_heart_rate: z.number().nullable(),
});
export type Workout = z.infer<typeof workoutSchema>;
export const workoutListSchema = pageSchema(workoutSchema);
export type WorkoutList = z.infer<typeof workoutListSchema>;

export const listWorkoutsQuerySchema = z
  .object({
    type: z.enum(WORKOUT_TYPES).optional().describe('Only workouts of this type.'),
    from: dayQuery.optional().describe('The first day to list (included), YYYY-MM-DD.'),
    to: dayQuery.optional().describe('The last day to list (included), YYYY-MM-DD.'),
    limit: dataPageLimitSchema,
    cursor: pageCursorSchema,
  })
  .strict();
export type ListWorkoutsQuery = z.infer<typeof listWorkoutsQuerySchema>;

// Profile --------------------------------------------------------------------------------------------

export const profileSchema = z
  .object({
    sex: z.enum(SEXES),
    birth_year: z.number().meta({
      description: `A whole number from ${PROFILE_SPECS.birth_year.accepted[0]} to the current year.`,
      minimum: PROFILE_SPECS.birth_year.accepted[0],
      type: 'integer',
    }),
    height_cm: z.number().meta(documented(PROFILE_SPECS.height_cm, accepted(PROFILE_SPECS.height_cm))),
    weight_kg: z.number().meta(documented(PROFILE_SPECS.weight_kg, accepted(PROFILE_SPECS.weight_kg))),
  })
  .strict();
export type Profile = z.infer<typeof profileSchema>;

// Lab results ----------------------------------------------------------------------------------------

const labBiomarkerSchema = z
  .enum(LAB_BIOMARKER_NAMES)
  .describe('A biomarker the service knows (docs/health-data.md#the-biomarkers).');

const labRowInputSchema = z
  .object({
    date: dayText.describe('The day the sample was taken, YYYY-MM-DD, not after today (UTC).'),
    biomarker: labBiomarkerSchema,
    value: z.number().meta({
      description:
        "The value in `unit`, zero or more. Converted to the biomarker's canonical unit, it must be within the biomarker's accepted range (docs/health-data.md#what-is-accepted).",
      minimum: 0,
    }),
    unit: z
      .string()
      .describe(
        "A UCUM unit that converts to the biomarker's canonical unit, e.g. mg/dL or mmol/L (case matters; docs/health-data.md#how-units-are-converted).",
      ),
  })
  .strict();

export const upsertLabRowsRequestSchema = z.object({ rows: rowsOf(labRowInputSchema) }).strict();

export type UpsertLabRowsRequest = z.infer<typeof upsertLabRowsRequestSchema>;

/**
 * A FHIR R4 Bundle as the request body: only `resourceType` is checked here, the rest by the bundle's own
 * reader (platform/health-data/labs/fhir.ts), whose refusals name the path in the bundle.
 */
export const fhirBundleSchema = z.looseObject({ resourceType: z.literal('Bundle') }).meta({
  description: `A FHIR R4 Bundle (collection, searchset or transaction) of 1 to ${MAX_DATA_ROWS_PER_REQUEST} LOINC-coded Observations with a valueQuantity (docs/health-data.md#fhir-r4-bundles). Also accepted as Content-Type: application/fhir+json.`,
  example: {
    resourceType: 'Bundle',
    type: 'collection',
    entry: [
      {
        resource: {
          resourceType: 'Observation',
          status: 'final',
          code: { coding: [{ system: 'http://loinc.org', code: '13457-7' }] },
          valueQuantity: { value: 3.36, unit: 'mmol/L', system: 'http://unitsofmeasure.org', code: 'mmol/L' },
          effectiveDateTime: '2025-03-04T08:30:00+01:00',
        },
      },
    ],
  },
});

export type FhirBundle = z.infer<typeof fhirBundleSchema>;

/**
 * Lab results as rows, or as a FHIR R4 Bundle: told apart by `resourceType: "Bundle"`. The example is
 * also what a generated request (the fuzz run) sends that the API stores: no schema can say which units
 * convert.
 */
export const upsertLabsRequestSchema = z.union([upsertLabRowsRequestSchema, fhirBundleSchema]).meta({
  example: {
    rows: [
      { date: '2025-03-04', biomarker: 'ldl_cholesterol', value: 3.36, unit: 'mmol/L' },
      { date: '2025-03-04', biomarker: 'hba1c', value: 5.4, unit: '%' },
    ],
  },
});

const labResultSchema = z.object({
  date: z.string().describe('The day the sample was taken, YYYY-MM-DD.'),
  biomarker: labBiomarkerSchema,
  value: z.number().describe("In the biomarker's canonical unit."),
  unit: z.string().describe("The biomarker's canonical unit (mg/dL, %, mIU/L, ng/mL or mg/L)."),
  loinc: z.string().describe('The LOINC code the service reports the biomarker under.'),
});
export type LabResult = z.infer<typeof labResultSchema>;
export const labResultListSchema = pageSchema(labResultSchema);
export type LabResultList = z.infer<typeof labResultListSchema>;

export const listLabsQuerySchema = z
  .object({
    biomarker: labBiomarkerSchema.optional().describe('Only results for this biomarker.'),
    from: dayQuery.optional().describe('The first day to list (included), YYYY-MM-DD.'),
    to: dayQuery.optional().describe('The last day to list (included), YYYY-MM-DD.'),
    limit: dataPageLimitSchema,
    cursor: pageCursorSchema,
  })
  .strict();
export type ListLabsQuery = z.infer<typeof listLabsQuerySchema>;

export const deleteLabsQuerySchema = z
  .object({
    biomarker: labBiomarkerSchema.optional().describe('Only results for this biomarker; all of them when left out.'),
    from: dayQuery.describe('The first day to delete (included), YYYY-MM-DD.'),
    to: dayQuery.describe('The last day to delete (included), YYYY-MM-DD.'),
  })
  .strict();
export type DeleteLabsQuery = z.infer<typeof deleteLabsQuerySchema>;

export const deleteLabsResultSchema = z.object({ deleted: z.number().int() });
export type DeleteLabsResult = z.infer<typeof deleteLabsResultSchema>;

// Connections ----------------------------------------------------------------------------------------

/**
 * A connection's status, and so what the backend should tell its user (`data.connection_changed`): the one
 * list, which the connection events' writer (platform/terra/connections.ts) takes from here. What each
 * means for the user is the status's description below.
 */
export const TERRA_CONNECTION_STATUSES = ['connected', 'reauth_required', 'disconnected', 'revoked', 'error'] as const;
export type TerraConnectionStatus = (typeof TERRA_CONNECTION_STATUSES)[number];

const terraConnectionSchema = z.object({
  terra_user_id: z.string().describe("Terra's id for this connection: the user's link to one provider."),
  provider: z.string().describe('The provider, as Terra names it (e.g. GARMIN, OURA, WHOOP).'),
  status: z
    .enum(TERRA_CONNECTION_STATUSES)
    .describe(
      "connected: the provider's data comes in. reauth_required, revoked, error: no data comes; ask the user to reconnect through Terra's widget. disconnected: the user removed the connection.",
    ),
  scopes: z
    .array(z.string())
    .describe('The scopes the user granted, as Terra reported them; empty when it reported none.'),
  connected_at: z
    .string()
    .nullable()
    .describe('When the service first received this connection as connected (ISO 8601); null if it never was.'),
  updated_at: z.string().describe('When the service last changed this connection (ISO 8601).'),
});
export type TerraConnection = z.infer<typeof terraConnectionSchema>;
export const terraConnectionListSchema = z.object({ data: z.array(terraConnectionSchema) });
export type TerraConnectionList = z.infer<typeof terraConnectionListSchema>;
