/**
 * Lab results sent as a FHIR R4 Bundle of Observations (docs/health-data.md#fhir-r4-bundles). The bundle is
 * untrusted JSON, so it is read with zod, one entry at a time, and every refusal names the path of what is
 * wrong (`entry[2].resource.valueQuantity`), never the value. The mapping is all or nothing: one refused
 * entry refuses the bundle, with every refusal listed so a sender can fix them in one pass.
 */
import type { Bundle, Observation, Quantity } from '@medplum/fhirtypes';
import { z } from 'zod';
import { labBiomarkerForLoinc, type LabBiomarker, type LabBiomarkerSpec } from '../../../contracts/lab-biomarkers';
import { normaliseLabValue, type LabUnitRefusalReason } from './units';

const LOINC_SYSTEM = 'http://loinc.org';
const UCUM_SYSTEM = 'http://unitsofmeasure.org';

/** One lab value, in its biomarker's canonical unit, on the calendar day it was taken. */
export interface LabRow {
  biomarker: LabBiomarker;
  value: number;
  unit: string;
  /** YYYY-MM-DD */
  date: string;
}

type FhirLabRefusalReason =
  | 'not_a_bundle'
  | 'malformed'
  | 'not_an_observation'
  | 'unusable_status'
  | 'unknown_code'
  | 'conflicting_codes'
  | 'no_quantity'
  | 'inexact_quantity'
  | 'no_date'
  | Exclude<LabUnitRefusalReason, 'unknown_biomarker'>;

export interface FhirLabRefusal {
  /** Where in the bundle, e.g. `entry[2].resource.valueQuantity`; `''` for the bundle itself. */
  path: string;
  reason: FhirLabRefusalReason;
  message: string;
}

/** A row read from a bundle, with where it was read, so that a later check can name the field it refuses. */
export interface FhirLabRow extends LabRow {
  /** The Observation, `entry[2].resource`. */
  path: string;
  /** The field the date was read from, `entry[2].resource.effectiveDateTime` (or `effectivePeriod.start`, `issued`). */
  datePath: string;
}

export type FhirLabRows = { ok: true; rows: FhirLabRow[] } | { ok: false; refusals: FhirLabRefusal[] };

/** A bundle with more problems than this is refused with the first ones listed. */
const MAX_REFUSALS = 100;
/** The Bundle types that carry resources to read; a transaction's requests are not carried out, only read. */
const BUNDLE_TYPES = ['collection', 'searchset', 'transaction'] as const satisfies readonly Bundle['type'][];
/** A result to store: not one still awaited (`registered`), withdrawn, entered in error or preliminary. */
const USABLE_STATUSES: ReadonlySet<Observation['status']> = new Set(['final', 'amended', 'corrected']);
const OBSERVATION_STATUSES = [
  'registered',
  'preliminary',
  'final',
  'amended',
  'corrected',
  'cancelled',
  'entered-in-error',
  'unknown',
] as const satisfies readonly Observation['status'][];

const bundleSchema = z.looseObject({
  resourceType: z.literal('Bundle'),
  type: z.enum(BUNDLE_TYPES),
  entry: z.array(z.looseObject({ resource: z.looseObject({ resourceType: z.string() }) })).optional(),
});

const observationSchema = z.looseObject({
  resourceType: z.literal('Observation'),
  status: z.enum(OBSERVATION_STATUSES),
  code: z.looseObject({
    coding: z.array(z.looseObject({ system: z.string().optional(), code: z.string().optional() })).optional(),
  }),
  valueQuantity: z
    .looseObject({
      value: z.number().optional(),
      comparator: z.enum(['<', '<=', '>=', '>']).optional(),
      unit: z.string().optional(),
      system: z.string().optional(),
      code: z.string().optional(),
    })
    .optional(),
  effectiveDateTime: z.string().optional(),
  effectivePeriod: z.looseObject({ start: z.string().optional() }).optional(),
  issued: z.string().optional(),
});

/** The part of an Observation read here; the schema's output must fit FHIR R4's own type. */
type ObservationRead = Pick<
  Observation,
  'resourceType' | 'status' | 'code' | 'valueQuantity' | 'effectiveDateTime' | 'effectivePeriod' | 'issued'
>;

/** A zod issue path as a FHIRPath-like string: `entry[2].resource.valueQuantity`. */
function formatPath(path: readonly PropertyKey[]): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`)).join('');
}

const refusal = (path: string, reason: FhirLabRefusalReason, message: string): FhirLabRefusal => ({
  path,
  reason,
  message,
});

/** The first zod issue of a failed parse, as a refusal at `prefix` + the issue's path. */
function malformed(prefix: string, error: z.ZodError): FhirLabRefusal {
  const issue = error.issues[0];
  const path = formatPath(issue.path);
  const at = prefix === '' ? path : path === '' ? prefix : `${prefix}.${path}`.replace('.[', '[');
  return refusal(at, 'malformed', 'this field is missing or not what FHIR R4 allows here');
}

/** The biomarker the LOINC codings name; a refusal when none is known or two name different ones. */
function biomarkerOf(code: Observation['code'], path: string): LabBiomarkerSpec | FhirLabRefusal {
  const known = (code.coding ?? [])
    .filter((coding) => coding.system === LOINC_SYSTEM && coding.code !== undefined)
    .map((coding) => labBiomarkerForLoinc(coding.code ?? ''))
    .filter((spec): spec is LabBiomarkerSpec => spec !== undefined);
  if (known.length === 0) {
    return refusal(`${path}.code`, 'unknown_code', 'no LOINC coding names a biomarker the service knows');
  }
  if (new Set(known.map((spec) => spec.name)).size > 1) {
    return refusal(`${path}.code`, 'conflicting_codes', 'the LOINC codings name different biomarkers');
  }
  return known[0];
}

/** The unit to read: the UCUM code when the quantity is coded in UCUM, else the human-readable unit. */
function unitOf(quantity: Quantity): string | undefined {
  if (quantity.system === UCUM_SYSTEM && quantity.code !== undefined) return quantity.code;
  return quantity.unit;
}

const FHIR_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/**
 * The calendar day of a FHIR date or dateTime as written, before any time zone is applied: the day the
 * sample was taken where it was taken, as the store keeps days (no time zone). Null for a partial date
 * (`2025` or `2025-03`) or one that is not a real day.
 */
function calendarDay(value: string): string | null {
  const match = FHIR_DATE_TIME.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  const real = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  return real ? `${match[1]}-${match[2]}-${match[3]}` : null;
}

/**
 * effectiveDateTime, else effectivePeriod.start, else issued: the first one present must be a full day.
 * Returns the day and the path of the field it was read from.
 */
function dateOf(observation: ObservationRead, path: string): { day: string; path: string } | FhirLabRefusal {
  const candidates: Array<[string, string | undefined]> = [
    ['effectiveDateTime', observation.effectiveDateTime],
    ['effectivePeriod.start', observation.effectivePeriod?.start],
    ['issued', observation.issued],
  ];
  const first = candidates.find(([, value]) => value !== undefined);
  if (!first) {
    return refusal(`${path}.effectiveDateTime`, 'no_date', 'no effectiveDateTime, effectivePeriod.start or issued');
  }
  const day = calendarDay(first[1] ?? '');
  const at = `${path}.${first[0]}`;
  return day === null
    ? refusal(at, 'no_date', 'not a full date (YYYY-MM-DD, optionally with a time)')
    : { day, path: at };
}

function rowOf(resource: unknown, path: string): FhirLabRow | FhirLabRefusal {
  const parsed = observationSchema.safeParse(resource);
  if (!parsed.success) return malformed(path, parsed.error);
  const observation: ObservationRead = parsed.data;

  if (!USABLE_STATUSES.has(observation.status)) {
    return refusal(`${path}.status`, 'unusable_status', 'only final, amended and corrected results are stored');
  }
  const spec = biomarkerOf(observation.code, path);
  if ('reason' in spec) return spec;

  const quantity = observation.valueQuantity;
  const unit = quantity ? unitOf(quantity) : undefined;
  if (!quantity || quantity.value === undefined || unit === undefined) {
    return refusal(`${path}.valueQuantity`, 'no_quantity', 'a valueQuantity with a value and a unit is required');
  }
  if (quantity.comparator !== undefined) {
    return refusal(
      `${path}.valueQuantity.comparator`,
      'inexact_quantity',
      'a value below or above a limit is not stored',
    );
  }
  const normalised = normaliseLabValue({ biomarker: spec.name, value: quantity.value, unit });
  if (!normalised.ok) {
    // unknown_biomarker cannot happen: spec came from the list.
    const reason = normalised.reason === 'unknown_biomarker' ? 'unknown_code' : normalised.reason;
    return refusal(`${path}.valueQuantity`, reason, normalised.message);
  }

  const date = dateOf(observation, path);
  if ('reason' in date) return date;
  return {
    biomarker: normalised.biomarker,
    value: normalised.value,
    unit: normalised.unit,
    date: date.day,
    path,
    datePath: date.path,
  };
}

/**
 * The lab rows a FHIR R4 Bundle (collection, searchset or transaction) of LOINC-coded Observations holds,
 * values converted to each biomarker's canonical unit; or every refusal, each with its path. An entry is
 * refused when it is not an Observation, has no status to store, no LOINC code the service knows, no
 * quantity (or one with a comparator), a unit that does not convert, or no full date. A bundle without
 * entries maps to no rows. Each row says where it was read (`path`, `datePath`); whether its day is in the
 * future, its value plausible or its biomarker and day repeated is for the validator (../validate.ts).
 */
export function labRowsFromFhirBundle(bundle: unknown): FhirLabRows {
  const parsed = bundleSchema.safeParse(bundle);
  if (!parsed.success) {
    const paths = parsed.error.issues.map((issue) => formatPath(issue.path));
    if (paths.some((path) => path === '' || path === 'resourceType')) {
      return {
        ok: false,
        refusals: [refusal(paths.includes('') ? '' : 'resourceType', 'not_a_bundle', 'not a FHIR Bundle')],
      };
    }
    const message = `not what a FHIR R4 Bundle (${BUNDLE_TYPES.join(', ')}) of resources has here`;
    return { ok: false, refusals: paths.slice(0, MAX_REFUSALS).map((path) => refusal(path, 'malformed', message)) };
  }

  const rows: FhirLabRow[] = [];
  const refusals: FhirLabRefusal[] = [];
  (parsed.data.entry ?? []).forEach((entry, i) => {
    const path = `entry[${i}].resource`;
    if (entry.resource.resourceType !== 'Observation') {
      refusals.push(refusal(`${path}.resourceType`, 'not_an_observation', 'only Observation resources are read'));
      return;
    }
    const row = rowOf(entry.resource, path);
    if ('reason' in row) refusals.push(row);
    else rows.push(row);
  });
  return refusals.length > 0 ? { ok: false, refusals: refusals.slice(0, MAX_REFUSALS) } : { ok: true, rows };
}
