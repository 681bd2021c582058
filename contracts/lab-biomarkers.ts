/**
 * The biomarkers the service knows: every lab value it stores, under the name `lab_biomarkers.name`, the
 * synthetic generator (`dev/synthetic-data/generate.ts`) and `activities/data/reference-ranges.json` use,
 * in the unit they use. Each has its LOINC code (the serum/plasma code, or blood for HbA1c), the other
 * LOINC codes accepted for it, its canonical UCUM unit and, where a value may arrive in molar units, the
 * molar mass that converts it. docs/health-data.md has the same table for readers. A contract: the API's
 * schemas (./data.ts) name the biomarkers a client may send; the lab module (platform/health-data/labs/)
 * converts and maps values with this table.
 *
 * LOINC codes were checked against the LOINC long common names (release 2.83). A code is accepted as an
 * alias only when it measures the same thing in the same specimen, in mass or molar units; codes for
 * another specimen (whole or capillary blood glucose) or another assay (standard CRP) are not.
 */

export const LAB_BIOMARKER_NAMES = [
  'ldl_cholesterol',
  'hdl_cholesterol',
  'total_cholesterol',
  'triglycerides',
  'fasting_glucose',
  'hba1c',
  'tsh',
  'vitamin_d',
  'ferritin',
  'hs_crp',
] as const;
export type LabBiomarker = (typeof LAB_BIOMARKER_NAMES)[number];

export interface LabBiomarkerSpec {
  name: LabBiomarker;
  /** For people (docs, messages). */
  label: string;
  /** The LOINC code the service reports the biomarker under. */
  loinc: string;
  /** Other LOINC codes a sender may use for the same measurement (mass and molar variants, methods). */
  loincAliases: readonly string[];
  /** The unit stored in `lab_biomarkers.unit` and used by reference-ranges.json, exactly as written there. */
  unit: string;
  /** The same unit as a UCUM code (differs from `unit` only for TSH: `mIU/L` is not valid UCUM). */
  ucum: string;
  /** g/mol, for values reported in molar units (mmol/L, nmol/L); absent where no molar unit is accepted. */
  molarMass?: number;
  /** Why this molar mass (the convention a lab's conversion factor follows). */
  molarMassConvention?: string;
  /**
   * The values stored, in the canonical unit, both ends included: wider than any value reported in a living
   * person, so that only an impossible value is refused, most often one sent in another unit than it names
   * (LDL in mmol/L labelled mg/dL is within, the other way round is 38.67 times too high).
   */
  accepted: readonly [number, number];
  /**
   * Only the canonical unit itself is accepted, never a unit UCUM would call commensurable. HbA1c's `%`
   * (NGSP/DCCT) is dimensionless, so UCUM would turn IFCC mmol/mol into % by dividing by 10, which is wrong:
   * the two scales are related by the master equation, not by a unit factor.
   */
  canonicalUnitOnly?: true;
  /**
   * Spellings that mean something else in UCUM for this biomarker and are rewritten before parsing: UK labs
   * write TSH in `mU/L`, meaning milli-international units, where UCUM's `U` is the enzyme unit (µmol/min).
   */
  unitSpellings?: Readonly<Record<string, string>>;
}

const CHOLESTEROL = 386.65;
const CHOLESTEROL_CONVENTION = 'cholesterol, C27H46O (386.65 g/mol): 1 mmol/L = 38.67 mg/dL';

export const LAB_BIOMARKERS: readonly LabBiomarkerSpec[] = [
  {
    name: 'ldl_cholesterol',
    label: 'LDL cholesterol',
    // 13457-7 "Cholesterol in LDL [Mass/volume] in Serum or Plasma by calculation": most labs report the
    // Friedewald (or Martin/Hopkins) calculation. Also accepted: 18262-6 (by direct assay), 2089-1 (method
    // not stated), 22748-8 and 39469-2 (the molar variants, [Moles/volume], the latter by calculation).
    loinc: '13457-7',
    loincAliases: ['18262-6', '2089-1', '22748-8', '39469-2'],
    unit: 'mg/dL',
    ucum: 'mg/dL',
    // Homozygous familial hypercholesterolaemia reaches about 1,000 mg/dL.
    accepted: [0, 1_000],
    molarMass: CHOLESTEROL,
    molarMassConvention: CHOLESTEROL_CONVENTION,
  },
  {
    name: 'hdl_cholesterol',
    label: 'HDL cholesterol',
    // 2085-9 "Cholesterol in HDL [Mass/volume] in Serum or Plasma"; 14646-4 is its [Moles/volume] variant.
    loinc: '2085-9',
    loincAliases: ['14646-4'],
    unit: 'mg/dL',
    ucum: 'mg/dL',
    // CETP deficiency reaches about 200 mg/dL.
    accepted: [0, 300],
    molarMass: CHOLESTEROL,
    molarMassConvention: CHOLESTEROL_CONVENTION,
  },
  {
    name: 'total_cholesterol',
    label: 'Total cholesterol',
    // 2093-3 "Cholesterol [Mass/volume] in Serum or Plasma"; 14647-2 is its [Moles/volume] variant.
    loinc: '2093-3',
    loincAliases: ['14647-2'],
    unit: 'mg/dL',
    ucum: 'mg/dL',
    // Homozygous familial hypercholesterolaemia reaches about 1,200 mg/dL.
    accepted: [0, 2_000],
    molarMass: CHOLESTEROL,
    molarMassConvention: CHOLESTEROL_CONVENTION,
  },
  {
    name: 'triglycerides',
    label: 'Triglycerides',
    // 2571-8 "Triglyceride [Mass/volume] in Serum or Plasma"; 14927-8 is its [Moles/volume] variant.
    loinc: '2571-8',
    loincAliases: ['14927-8'],
    unit: 'mg/dL',
    ucum: 'mg/dL',
    // Familial chylomicronaemia has been reported above 20,000 mg/dL.
    accepted: [0, 30_000],
    molarMass: 885.7,
    molarMassConvention:
      'triglycerides expressed as triolein (≈885.7 g/mol), the convention behind the usual factor 1 mmol/L = 88.57 mg/dL',
  },
  {
    name: 'fasting_glucose',
    label: 'Fasting plasma glucose',
    // 1558-6 "Fasting glucose [Mass/volume] in Serum or Plasma" says what the service stores. Also accepted:
    // 2345-7 "Glucose [Mass/volume] in Serum or Plasma", the code most labs send even for a fasting draw (the
    // store only holds fasting glucose, so a sender using it is taken to mean a fasting sample), and the molar
    // variants 14771-0 (fasting) and 14749-6. Whole-blood and capillary glucose (2339-0, 41653-7) are not:
    // they read about 11% lower than plasma.
    loinc: '1558-6',
    loincAliases: ['2345-7', '14771-0', '14749-6'],
    unit: 'mg/dL',
    ucum: 'mg/dL',
    // Hyperosmolar states have been reported near 2,700 mg/dL.
    accepted: [0, 3_000],
    molarMass: 180.16,
    molarMassConvention: 'glucose, C6H12O6 (180.16 g/mol): 1 mmol/L = 18.016 mg/dL',
  },
  {
    name: 'hba1c',
    label: 'HbA1c',
    // 4548-4 "Hemoglobin A1c/Hemoglobin.total in Blood" (NGSP %); 17856-6 (by HPLC) and 4549-2 (by
    // electrophoresis) are the same quantity by a named method. 59261-8 (IFCC, mmol/mol) is not accepted: it
    // is a different scale (see canonicalUnitOnly).
    loinc: '4548-4',
    loincAliases: ['17856-6', '4549-2'],
    unit: '%',
    ucum: '%',
    // No assay reports HbA1c below 2% or above 25%.
    accepted: [2, 25],
    canonicalUnitOnly: true,
  },
  {
    name: 'tsh',
    label: 'Thyroid-stimulating hormone (TSH)',
    // 3016-3 "Thyrotropin [Units/volume] in Serum or Plasma"; 11579-0 and 11580-8 are the same by assays with a
    // stated detection limit (<= 0.05 and <= 0.005 mIU/L, second and third generation).
    loinc: '3016-3',
    loincAliases: ['11579-0', '11580-8'],
    unit: 'mIU/L',
    ucum: 'm[IU]/L',
    // Untreated severe hypothyroidism reaches several hundred mIU/L; 0 is a suppressed TSH.
    accepted: [0, 1_000],
    unitSpellings: { 'mU/L': 'm[IU]/L', 'uU/mL': 'u[IU]/mL', 'mU/l': 'm[IU]/L', 'uU/ml': 'u[IU]/mL' },
  },
  {
    name: 'vitamin_d',
    label: '25-hydroxyvitamin D',
    // 62292-8 "25-Hydroxyvitamin D3+25-Hydroxyvitamin D2 [Mass/volume] in Serum or Plasma", the total the
    // reference ranges judge. Also accepted: 1989-3 and 14635-7 (25-hydroxyvitamin D3 alone, mass and molar),
    // which many labs have long sent for the total, and which differ from it only by the D2 a supplement adds.
    loinc: '62292-8',
    loincAliases: ['1989-3', '14635-7'],
    unit: 'ng/mL',
    ucum: 'ng/mL',
    // Vitamin D intoxication has been reported near 650 ng/mL.
    accepted: [0, 1_000],
    molarMass: 400.64,
    molarMassConvention: '25-hydroxyvitamin D3, C27H44O2 (400.64 g/mol): 1 ng/mL = 2.496 nmol/L',
  },
  {
    name: 'ferritin',
    label: 'Serum ferritin',
    // 2276-4 "Ferritin [Mass/volume] in Serum or Plasma". No molar unit is accepted (labs report mass).
    loinc: '2276-4',
    loincAliases: [],
    unit: 'ng/mL',
    ucum: 'ng/mL',
    // Haemophagocytic syndromes reach 100,000 ng/mL and more.
    accepted: [0, 200_000],
  },
  {
    name: 'hs_crp',
    label: 'High-sensitivity C-reactive protein (hs-CRP)',
    // 30522-7 "C reactive protein [Mass/volume] in Serum or Plasma by High sensitivity method". Standard CRP
    // (1988-5) is not accepted: its assays do not resolve the 1-3 mg/L range the reference ranges judge.
    loinc: '30522-7',
    loincAliases: [],
    unit: 'mg/L',
    ucum: 'mg/L',
    // Sepsis reaches about 500 mg/L.
    accepted: [0, 1_000],
  },
];

const BY_NAME = new Map<string, LabBiomarkerSpec>(LAB_BIOMARKERS.map((spec) => [spec.name, spec]));
const BY_LOINC = new Map<string, LabBiomarkerSpec>(
  LAB_BIOMARKERS.flatMap((spec) => [spec.loinc, ...spec.loincAliases].map((code) => [code, spec] as const)),
);

/** The biomarker stored under this name, or undefined (never for a name typed as a LabBiomarker). */
export function labBiomarker(name: LabBiomarker): LabBiomarkerSpec;
export function labBiomarker(name: string): LabBiomarkerSpec | undefined;
export function labBiomarker(name: string): LabBiomarkerSpec | undefined {
  return BY_NAME.get(name);
}

/** The biomarker a LOINC code (its own or an accepted alias) measures, or undefined. */
export function labBiomarkerForLoinc(code: string): LabBiomarkerSpec | undefined {
  return BY_LOINC.get(code.trim());
}
