/**
 * The Domain Expert's `range_compare` tool (docs/design.md#domain-expert): where a value sits on a
 * clinical guideline's own scale, for the person's sex and age, with the guideline it comes from.
 *
 * The file is checked when this module loads, so an entry without a source, a scale with gaps or
 * overlaps, or two entries answering to one name stop the worker at start-up instead of giving the
 * agent a range nobody can trace.
 */
import { z } from 'zod';
import rangesFile from '../../data/reference-ranges.json';
import { defineTool, ToolRequestError } from './tool-contract';

const POSITIONS = ['below', 'within', 'borderline', 'above'] as const;
type RangePosition = (typeof POSITIONS)[number];

const SEXES = ['female', 'male'] as const;
export type Sex = (typeof SEXES)[number];

const bandSchema = z
  .object({
    /** Exclusive unless `upper_inclusive`; the last band has none. The lower bound is the previous band's upper. */
    upper: z.number().nonnegative().optional(),
    upper_inclusive: z.boolean().optional(),
    position: z.enum(POSITIONS),
    /** The guideline's own name for the band. */
    label: z.string().min(1),
  })
  .strict();
type Band = z.infer<typeof bandSchema>;

const rangeSchema = z
  .object({
    /** Absent: the range is the same for both sexes. */
    sex: z.enum(SEXES).optional(),
    min_age: z.number().int().min(0).optional(),
    max_age: z.number().int().min(0).optional(),
    bands: z
      .array(bandSchema)
      .min(2)
      .refine((bands) => bands.slice(0, -1).every((b) => b.upper !== undefined) && bands.at(-1)?.upper === undefined, {
        message: 'every band but the last needs an upper bound, and the last has none',
      })
      .refine((bands) => bands.slice(1, -1).every((b, i) => (b.upper ?? 0) > (bands[i].upper ?? 0)), {
        message: 'upper bounds must increase band by band',
      }),
  })
  .strict();
type ReferenceRange = z.infer<typeof rangeSchema>;

const ID = /^[a-z0-9_]+$/;

const referenceEntrySchema = z
  .object({
    id: z.string().regex(ID),
    name: z.string().min(1),
    aliases: z.array(z.string().min(1)),
    unit: z.string().min(1),
    ranges: z.array(rangeSchema).min(1),
    note: z.string().min(1).optional(),
    source: z
      .object({
        citation: z.string().min(1),
        url: z.url({ protocol: /^https$/ }),
        year: z.number().int().min(1900).max(2100),
      })
      .strict(),
  })
  .strict();
export type ReferenceEntry = z.infer<typeof referenceEntrySchema>;

/** `LDL-C`, `ldl c` and `ldl_c` are one name. */
export const normaliseBiomarkerName = (name: string) =>
  name
    .trim()
    .toLowerCase()
    .replace(/[\s\-()]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '');

const namesOf = (entry: ReferenceEntry) => [entry.id, ...entry.aliases].map(normaliseBiomarkerName);

const rangesFileSchema = z
  .array(referenceEntrySchema)
  .min(1)
  .refine((entries) => new Set(entries.map((e) => e.id)).size === entries.length, {
    message: 'reference range ids must be unique',
  })
  .superRefine((entries, ctx) => {
    const names = entries.flatMap(namesOf);
    const repeated = [...new Set(names.filter((name, i) => names.indexOf(name) !== i))];
    if (repeated.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `names given twice (as ids or aliases, after normalising): ${repeated.join(', ')}`,
      });
    }
  });

/** Checks a reference-range file: every entry sourced, every scale gapless and rising, every name unique. */
export const parseReferenceRanges = (file: unknown): ReferenceEntry[] => rangesFileSchema.parse(file);

export const REFERENCE_RANGES: readonly ReferenceEntry[] = parseReferenceRanges(rangesFile);

const BY_NAME = new Map(REFERENCE_RANGES.flatMap((entry) => namesOf(entry).map((name) => [name, entry] as const)));

/** The entry an id or alias names (`ldl`, `LDL-C`, `ldl_cholesterol`); undefined when none does. */
export function findReferenceEntry(name: string): ReferenceEntry | undefined {
  return BY_NAME.get(normaliseBiomarkerName(name));
}

interface BandOnScale {
  band: string;
  range: string;
  position: RangePosition;
}

interface Classification {
  /** Null when the range is the same for both sexes. */
  sex: Sex | null;
  applies_to: string;
  position: RangePosition;
  band: string;
  band_range: string;
  /** The guideline's whole scale, lowest band first. */
  scale: BandOnScale[];
}

export interface RangeComparison {
  biomarker: string;
  name: string;
  value: number;
  unit: string;
  /** One per range that fits what is known of the person: both sexes' when the sex was not given. */
  classifications: Classification[];
  note?: string;
  source: ReferenceEntry['source'];
}

const numberText = (n: number) => String(n);

/** `<100 mg/dL`, `100 to <130 mg/dL`, `1 to 3 mg/L`, `>3 to <10 mg/L`, `≥190 mg/dL`. */
function bandRange(bands: Band[], index: number, unit: string): string {
  const band = bands[index];
  const previous = index > 0 ? bands[index - 1] : undefined;
  const lower =
    previous?.upper === undefined ? null : `${previous.upper_inclusive ? '>' : ''}${numberText(previous.upper)}`;
  const upper = band.upper === undefined ? null : `${band.upper_inclusive ? '' : '<'}${numberText(band.upper)}`;
  if (lower === null) return `${band.upper_inclusive ? '≤' : '<'}${numberText(band.upper ?? 0)} ${unit}`;
  if (upper === null) return `${previous?.upper_inclusive ? '>' : '≥'}${numberText(previous?.upper ?? 0)} ${unit}`;
  return `${lower} to ${upper} ${unit}`;
}

function bandIndexOf(bands: Band[], value: number): number {
  const index = bands.findIndex(
    (b) => b.upper === undefined || value < b.upper || (b.upper_inclusive === true && value === b.upper),
  );
  return index === -1 ? bands.length - 1 : index;
}

function appliesTo(range: ReferenceRange): string {
  const who = range.sex === 'female' ? 'women' : range.sex === 'male' ? 'men' : 'adults';
  if (range.min_age !== undefined && range.max_age !== undefined) {
    return `${who} aged ${range.min_age} to ${range.max_age}`;
  }
  if (range.min_age !== undefined) return `${who} aged ${range.min_age} and over`;
  return range.max_age !== undefined ? `${who} up to age ${range.max_age}` : who;
}

function classify(range: ReferenceRange, value: number, unit: string): Classification {
  const index = bandIndexOf(range.bands, value);
  return {
    sex: range.sex ?? null,
    applies_to: appliesTo(range),
    position: range.bands[index].position,
    band: range.bands[index].label,
    band_range: bandRange(range.bands, index, unit),
    scale: range.bands.map((b, i) => ({ band: b.label, range: bandRange(range.bands, i, unit), position: b.position })),
  };
}

const normaliseUnit = (unit: string) => unit.trim().toLowerCase().replace(/\s+/g, '');

/**
 * Where `value` sits on the named biomarker's guideline scale, for the person's sex and age when known.
 * An unknown biomarker, a unit other than the range's, or a person no range covers is a ToolRequestError.
 */
export function compareToReferenceRange(input: {
  biomarker: string;
  value: number;
  unit?: string;
  sex?: Sex;
  age?: number;
}): RangeComparison {
  const entry = findReferenceEntry(input.biomarker);
  if (!entry) {
    throw new ToolRequestError(
      `no reference range for "${input.biomarker}"; known biomarkers: ${REFERENCE_RANGES.map((e) => e.id).join(', ')}`,
    );
  }
  if (input.unit !== undefined && normaliseUnit(input.unit) !== normaliseUnit(entry.unit)) {
    throw new ToolRequestError(
      `the ${entry.id} range is in ${entry.unit}, not ${input.unit}; convert the value to ${entry.unit} first`,
    );
  }
  const { sex, age } = input;
  const ranges = entry.ranges.filter(
    (r) =>
      (sex === undefined || r.sex === undefined || r.sex === sex) &&
      (age === undefined || ((r.min_age ?? 0) <= age && age <= (r.max_age ?? Infinity))),
  );
  if (ranges.length === 0) {
    const covered = entry.ranges.map(appliesTo).join('; ');
    throw new ToolRequestError(
      `no ${entry.id} range applies to ${[sex, age === undefined ? undefined : `age ${age}`].filter(Boolean).join(', ')} (the ranges cover: ${covered})`,
    );
  }
  return {
    biomarker: entry.id,
    name: entry.name,
    value: input.value,
    unit: entry.unit,
    classifications: ranges.map((r) => classify(r, input.value, entry.unit)),
    ...(entry.note ? { note: entry.note } : {}),
    source: entry.source,
  };
}

export const rangeCompareTool = defineTool({
  name: 'range_compare',
  description:
    "Compare a value with the clinical reference range for a biomarker (lipids, glucose, HbA1c, blood pressure, TSH, vitamin D, ferritin, hs-CRP, resting heart rate) or a daily activity measure (active_zone_minutes: minutes a day of moderate-to-vigorous activity, against the WHO guideline). Returns the guideline's bands, the band the value falls in (below, within, borderline or above) and the guideline's citation and URL. Give sex and age when known: some ranges depend on them.",
  input: z
    .object({
      biomarker: z.string().trim().min(1).describe('Biomarker name or abbreviation, e.g. "ldl", "HbA1c", "systolic"'),
      value: z.number().nonnegative(),
      unit: z.string().trim().min(1).optional().describe("The value's unit; omit to use the range's own unit"),
      sex: z.enum(SEXES).optional(),
      age: z.number().int().min(0).max(130).optional(),
    })
    .strict(),
  run: (input) => compareToReferenceRange(input),
});
