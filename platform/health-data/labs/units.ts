/**
 * A lab value in whatever unit a client sends, brought to the biomarker's canonical unit (the one the store
 * and the reference ranges use) with the NLM's UCUM library, `@lhncbc/ucum-lhc`.
 *
 * How a unit is read (docs/health-data.md#how-units-are-converted):
 * - UCUM is case-sensitive and so is this module: `mg/dL`, `mg/dl` and `mmol/l` are all valid UCUM (`l` is the
 *   litre too), while `MG/DL` is not and is refused as an unknown unit. Folding case is not safe in general:
 *   `M` is mega, `m` milli; `Pa` pascal, `PA` nothing.
 * - Before parsing, a few spellings clients commonly send are rewritten to UCUM: `µ` (micro sign) and `μ`
 *   (Greek mu) to `u`, `mcg` to `ug`, an international unit written `IU` to `[IU]` (`mIU/L` → `m[IU]/L`,
 *   `µIU/mL` → `u[IU]/mL`), and the biomarker's own `unitSpellings` (TSH in `mU/L`).
 * - A unit spelled as a property every object has (`constructor`, `toString`) is no unit: the library would
 *   find it in its tables. Whatever the library throws on is refused too.
 * - Molar units convert with the biomarker's molar mass (`molarMass`); a biomarker without one refuses them.
 * - UCUM never converts arbitrary units such as `[IU]`, not even `m[IU]/L` to itself. Both sides naming the
 *   same international unit once, the rest of the expression is converted with a base unit no lab reports
 *   (the candela) standing in for it, which gives the prefix and volume factor (1 µIU/mL = 1 mIU/L).
 * - The result is rounded to 12 significant digits, which removes floating-point noise (129.91439999999997)
 *   and nothing a lab measures.
 */
import { UcumLhcUtils } from '@lhncbc/ucum-lhc';
import { isOwnKey, ownValue } from '../../../contracts/own-keys';
import { labBiomarker, type LabBiomarker, type LabBiomarkerSpec } from '../../../contracts/lab-biomarkers';

export type LabUnitRefusalReason = 'unknown_biomarker' | 'unknown_unit' | 'inconvertible_unit' | 'invalid_value';

export interface LabValueInput {
  /** A name from LAB_BIOMARKER_NAMES. */
  biomarker: string;
  value: number;
  unit: string;
}

export type NormalisedLabValue =
  | { ok: true; biomarker: LabBiomarker; value: number; unit: string }
  | {
      ok: false;
      reason: LabUnitRefusalReason;
      /** Says what is wrong without repeating the value. */
      message: string;
    };

const MAX_UNIT_LENGTH = 40;
const SIGNIFICANT_DIGITS = 12;
/** UCUM's international unit; `[iU]` is defined as exactly 1 `[IU]`. */
const INTERNATIONAL_UNIT = /\[(?:IU|iU)\]/g;
const STAND_IN = 'cd';

let instance: UcumLhcUtils | undefined;
const ucum = (): UcumLhcUtils => (instance ??= UcumLhcUtils.getInstance());

/**
 * Runs a call into the library with console.log silenced: on some malformed input (blanks, annotations
 * beside parentheses) it logs the unit string it was given, and a client's input has no place in our logs.
 * The call is synchronous, so nothing else runs while the console is swapped. Null when the library throws:
 * what it cannot handle is a unit refused, never a 500.
 */
function quietly<T>(call: () => T): T | null {
  const log = console.log;
  console.log = () => undefined;
  try {
    return call();
  } catch {
    return null;
  } finally {
    console.log = log;
  }
}

/** The unit as a valid UCUM code, after the spelling rewrites above; null when UCUM cannot parse it. */
function toUcum(unit: string, spec: LabBiomarkerSpec): string | null {
  const trimmed = unit.trim();
  if (trimmed === '' || trimmed.length > MAX_UNIT_LENGTH || /\s/.test(trimmed)) return null;
  let spelled = trimmed.replace(/[\u00B5\u03BC]/g, 'u').replace(/mcg/g, 'ug');
  spelled = (spec.unitSpellings && ownValue(spec.unitSpellings, spelled)) ?? spelled;
  spelled = spelled.replace(/(?<![[A-Za-z])([kmunp]?)IU(?![\]A-Za-z])/g, '$1[IU]');
  // The library keeps its units in plain objects: it finds `constructor` or `toString` there, calls it a valid
  // unit, and throws converting it.
  if (isOwnKey(Object.prototype, spelled)) return null;
  const validation = quietly(() => ucum().validateUnitString(spelled, false));
  return validation?.status === 'valid' && validation.ucumCode ? validation.ucumCode : null;
}

/** `value` in `from` as the biomarker's canonical UCUM unit, or null when UCUM cannot convert it. */
function convert(value: number, from: string, spec: LabBiomarkerSpec): number | null {
  if (spec.canonicalUnitOnly) return from === spec.ucum ? value : null;
  let fromUnit = from;
  let toUnit = spec.ucum;
  const arbitraryFrom = fromUnit.match(INTERNATIONAL_UNIT)?.length ?? 0;
  const arbitraryTo = toUnit.match(INTERNATIONAL_UNIT)?.length ?? 0;
  if (arbitraryFrom > 0 || arbitraryTo > 0) {
    if (arbitraryFrom !== 1 || arbitraryTo !== 1 || fromUnit.includes(STAND_IN) || toUnit.includes(STAND_IN)) {
      return null;
    }
    fromUnit = fromUnit.replace(INTERNATIONAL_UNIT, STAND_IN);
    toUnit = toUnit.replace(INTERNATIONAL_UNIT, STAND_IN);
  }
  const options = spec.molarMass === undefined ? {} : { molecularWeight: spec.molarMass };
  const conversion = quietly(() => ucum().convertUnitTo(fromUnit, value, toUnit, options));
  const converted = conversion?.toVal;
  return conversion?.status === 'succeeded' && typeof converted === 'number' && Number.isFinite(converted)
    ? converted
    : null;
}

/**
 * The value in its biomarker's canonical unit (`unit` is the stored spelling, e.g. `mIU/L` for TSH), or a
 * typed refusal: `unknown_biomarker` (not in LAB_BIOMARKER_NAMES), `unknown_unit` (UCUM cannot parse the
 * unit), `inconvertible_unit` (a valid unit that does not convert to the canonical one, such as a molar unit
 * for a biomarker without a molar mass, or mmol/mol for HbA1c), `invalid_value` (not a finite number ≥ 0).
 */
export function normaliseLabValue({ biomarker, value, unit }: LabValueInput): NormalisedLabValue {
  const spec = labBiomarker(biomarker);
  if (!spec) return { ok: false, reason: 'unknown_biomarker', message: 'the biomarker is not one the service knows' };
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    return { ok: false, reason: 'invalid_value', message: 'the value must be a finite number, zero or more' };
  }
  const from = toUcum(unit, spec);
  if (from === null) return { ok: false, reason: 'unknown_unit', message: 'the unit is not a valid UCUM unit' };
  const converted = convert(value, from, spec);
  if (converted === null) {
    return {
      ok: false,
      reason: 'inconvertible_unit',
      message: `the unit does not convert to ${spec.unit}, the unit ${spec.name} is stored in`,
    };
  }
  return { ok: true, biomarker: spec.name, value: Number(converted.toPrecision(SIGNIFICANT_DIGITS)), unit: spec.unit };
}
