/**
 * Lab results (platform/health-data/labs/): the biomarker list agrees with what the store, the generator and
 * the reference ranges already use; units convert through UCUM with the documented molar masses; a FHIR R4
 * Bundle maps onto rows, and every refusal names its path and never the value.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Bundle, Observation } from '@medplum/fhirtypes';
import { UcumLhcUtils } from '@lhncbc/ucum-lhc';
import referenceRanges from '../../activities/data/reference-ranges.json';
import { generateHealthData } from '../../dev/synthetic-data/generate';
import {
  LAB_BIOMARKERS,
  LAB_BIOMARKER_NAMES,
  labBiomarker,
  labBiomarkerForLoinc,
  labRowsFromFhirBundle,
  normaliseLabValue,
  type FhirLabRefusal,
} from '../../platform/health-data/labs';

const ucum = UcumLhcUtils.getInstance();

describe('the biomarker list', () => {
  test('names every biomarker once, each with a LOINC code no other biomarker uses', () => {
    expect(LAB_BIOMARKERS.map((spec) => spec.name)).toEqual([...LAB_BIOMARKER_NAMES]);
    const codes = LAB_BIOMARKERS.flatMap((spec) => [spec.loinc, ...spec.loincAliases]);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^\d{1,5}-\d$/);
  });

  test('LOINC check digits are right (mod 10, as LOINC computes them)', () => {
    // LOINC's check digit is the Luhn mod-10 digit of the code's number: a mistyped code rarely passes.
    const luhn = (digits: string) => {
      let sum = 0;
      [...digits].reverse().forEach((d, i) => {
        let n = Number(d) * (i % 2 === 0 ? 2 : 1);
        if (n > 9) n -= 9;
        sum += n;
      });
      return (10 - (sum % 10)) % 10;
    };
    for (const code of LAB_BIOMARKERS.flatMap((spec) => [spec.loinc, ...spec.loincAliases])) {
      const [number, check] = code.split('-');
      expect(`${code}: ${luhn(number)}`).toBe(`${code}: ${check}`);
    }
  });

  test('each canonical unit is valid UCUM, and is the stored unit (TSH: m[IU]/L for mIU/L)', () => {
    for (const spec of LAB_BIOMARKERS) {
      expect({ name: spec.name, status: ucum.validateUnitString(spec.ucum).status }).toEqual({
        name: spec.name,
        status: 'valid',
      });
      if (spec.name !== 'tsh') expect(spec.unit).toBe(spec.ucum);
    }
    expect(labBiomarker('tsh')).toMatchObject({ unit: 'mIU/L', ucum: 'm[IU]/L' });
  });

  test('names and units are those of the reference ranges', () => {
    const ranges = new Map(referenceRanges.map((range) => [range.id, range.unit]));
    for (const spec of LAB_BIOMARKERS) expect([spec.name, ranges.get(spec.name)]).toEqual([spec.name, spec.unit]);
  });

  test('names and units are those the synthetic generator stores', () => {
    const { biomarkers } = generateHealthData({ seed: 7, days: 120, endDate: new Date('2026-01-31T00:00:00Z') });
    expect(biomarkers.length).toBeGreaterThan(0);
    for (const row of biomarkers) expect([row.name, row.unit]).toEqual([row.name, labBiomarker(row.name)?.unit]);
    expect(new Set(biomarkers.map((row) => row.name))).toEqual(new Set(LAB_BIOMARKER_NAMES));
  });

  test('docs/health-data.md has the same table: name, LOINC, aliases, unit and molar mass', () => {
    const page = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'health-data.md'), 'utf8');
    const codes = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    const documented = page
      .split('\n')
      .filter((line) => /^\| `[a-z_0-9]+` +\|/.test(line))
      .map((line) => line.split('|').map((cell) => cell.trim()))
      .filter((cells) => cells.length === 8)
      .map(([, name, , loinc, aliases, unit, molarMass]) => ({
        name: codes(name)[0],
        loinc: codes(loinc)[0],
        loincAliases: codes(aliases),
        unit: codes(unit)[0],
        molarMass: /^[\d.]+/.exec(molarMass)?.[0],
      }));
    expect(documented).toEqual(
      LAB_BIOMARKERS.map((spec) => ({
        name: spec.name,
        loinc: spec.loinc,
        loincAliases: [...spec.loincAliases],
        unit: spec.unit,
        molarMass: spec.molarMass === undefined ? undefined : String(spec.molarMass),
      })),
    );
  });

  test('accepted ranges hold every value the generator draws, and docs/health-data.md states them', () => {
    const { biomarkers } = generateHealthData({ seed: 7, days: 400, endDate: new Date('2026-01-31T00:00:00Z') });
    for (const row of biomarkers) {
      const [min, max] = labBiomarker(row.name)?.accepted ?? [NaN, NaN];
      expect({ name: row.name, within: row.value >= min && row.value <= max }).toEqual({
        name: row.name,
        within: true,
      });
    }
    const page = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'health-data.md'), 'utf8');
    const section = page.slice(page.indexOf('### What is accepted'));
    const documented = [...section.matchAll(/^\| `([a-z_0-9]+)` +\| ([\d,.]+)–([\d,.]+) (\S+) +\|/gm)].map(
      ([, name, min, max, unit]) => ({
        name,
        accepted: [Number(min.replace(/,/g, '')), Number(max.replace(/,/g, ''))],
        unit,
      }),
    );
    expect(documented).toEqual(
      LAB_BIOMARKERS.map((spec) => ({ name: spec.name, accepted: [...spec.accepted], unit: spec.unit })),
    );
  });

  test('finds a biomarker by its LOINC code or an accepted alias, and not by a rejected one', () => {
    expect(labBiomarkerForLoinc('13457-7')?.name).toBe('ldl_cholesterol');
    expect(labBiomarkerForLoinc('18262-6')?.name).toBe('ldl_cholesterol');
    expect(labBiomarkerForLoinc('2345-7')?.name).toBe('fasting_glucose');
    expect(labBiomarkerForLoinc('4548-4')?.name).toBe('hba1c');
    expect(labBiomarkerForLoinc('1988-5')).toBeUndefined(); // standard CRP, not hs-CRP
    expect(labBiomarkerForLoinc('2339-0')).toBeUndefined(); // glucose in whole blood
    expect(labBiomarkerForLoinc('59261-8')).toBeUndefined(); // HbA1c by IFCC, mmol/mol
  });
});

describe('normaliseLabValue', () => {
  const value = (biomarker: string, v: number, unit: string) => {
    const result = normaliseLabValue({ biomarker, value: v, unit });
    if (!result.ok) throw new Error(`refused: ${result.reason}`);
    return result;
  };

  test('LDL in mmol/L converts to mg/dL with cholesterol (386.65 g/mol), and back', () => {
    expect(value('ldl_cholesterol', 3.36, 'mmol/L')).toEqual({
      ok: true,
      biomarker: 'ldl_cholesterol',
      value: 129.9144,
      unit: 'mg/dL',
    });
    expect(value('ldl_cholesterol', 130, 'mg/dL').value).toBe(130);
    expect(ucum.convertUnitTo('mg/dL', 130, 'mmol/L', { molecularWeight: 386.65 }).toVal).toBeCloseTo(3.362, 3);
  });

  test('glucose converts with 180.16 g/mol, triglycerides with 885.7, vitamin D with 400.64', () => {
    expect(value('fasting_glucose', 5, 'mmol/L').value).toBeCloseTo(90.08, 6);
    expect(value('fasting_glucose', 5.5, 'mmol/l').value).toBeCloseTo(99.088, 6);
    expect(ucum.convertUnitTo('mg/dL', 90.08, 'mmol/L', { molecularWeight: 180.16 }).toVal).toBeCloseTo(5, 9);
    expect(value('triglycerides', 1.2, 'mmol/L').value).toBeCloseTo(106.284, 6);
    expect(value('hdl_cholesterol', 1.3, 'mmol/L').value).toBeCloseTo(50.2645, 6);
    expect(value('vitamin_d', 75, 'nmol/L').value).toBeCloseTo(30.048, 6);
  });

  test('mass units convert by their factor: g/L to mg/dL, ug/L to ng/mL, mg/dL to mg/L', () => {
    expect(value('total_cholesterol', 1.9, 'g/L').value).toBe(190);
    expect(value('ferritin', 85, 'ug/L').value).toBe(85);
    expect(value('ferritin', 85, 'µg/L').value).toBe(85);
    expect(value('ferritin', 85, 'mcg/L').value).toBe(85);
    expect(value('hs_crp', 0.12, 'mg/dL').value).toBe(1.2);
    expect(value('vitamin_d', 30, 'ug/L').value).toBe(30);
  });

  test('% stays %', () => {
    expect(value('hba1c', 5.4, '%')).toEqual({ ok: true, biomarker: 'hba1c', value: 5.4, unit: '%' });
  });

  test('TSH in the spellings labs use: mIU/L, µIU/mL, uIU/mL, m[IU]/L, [IU]/L, mU/L', () => {
    for (const unit of ['mIU/L', 'µIU/mL', 'μIU/mL', 'uIU/mL', 'u[IU]/mL', 'm[IU]/L', 'mU/L', 'mIU/l']) {
      expect([unit, value('tsh', 2.1, unit)]).toEqual([
        unit,
        { ok: true, biomarker: 'tsh', value: 2.1, unit: 'mIU/L' },
      ]);
    }
    expect(value('tsh', 0.0021, '[IU]/L').value).toBe(2.1);
  });

  test('lower-case litres and decilitres are UCUM; upper case is not, and is refused', () => {
    expect(value('ldl_cholesterol', 120, 'mg/dl').value).toBe(120);
    expect(value('ferritin', 40, 'ng/ml').value).toBe(40);
    expect(normaliseLabValue({ biomarker: 'ldl_cholesterol', value: 120, unit: 'MG/DL' })).toMatchObject({
      ok: false,
      reason: 'unknown_unit',
    });
  });

  test('units UCUM cannot parse are unknown_unit', () => {
    for (const unit of ['', ' ', 'mg / dL', 'foo', 'mg/dL/', 'milligrams', 'x'.repeat(60)]) {
      expect([unit, normaliseLabValue({ biomarker: 'ldl_cholesterol', value: 120, unit })]).toEqual([
        unit,
        expect.objectContaining({ ok: false, reason: 'unknown_unit' }),
      ]);
    }
  });

  test.each([...Object.getOwnPropertyNames(Object.prototype), 'prototype'])(
    'a unit spelled like an inherited property (%s) is unknown_unit, for TSH too, which has spellings of its own',
    (unit) => {
      for (const biomarker of ['tsh', 'ldl_cholesterol']) {
        expect(normaliseLabValue({ biomarker, value: 2, unit })).toMatchObject({ ok: false, reason: 'unknown_unit' });
      }
      expect(normaliseLabValue({ biomarker: unit, value: 2, unit: 'mg/dL' })).toMatchObject({
        ok: false,
        reason: 'unknown_biomarker',
      });
    },
  );

  test('what the UCUM library throws on is a refusal, never an exception', () => {
    const thrown = () => {
      throw new TypeError("Cannot read properties of undefined (reading 'getElementAt')");
    };
    const validate = jest.spyOn(UcumLhcUtils.prototype, 'validateUnitString').mockImplementationOnce(thrown);
    const convert = jest.spyOn(UcumLhcUtils.prototype, 'convertUnitTo').mockImplementationOnce(thrown);
    try {
      expect(normaliseLabValue({ biomarker: 'ldl_cholesterol', value: 120, unit: 'mg/dL' })).toMatchObject({
        ok: false,
        reason: 'unknown_unit',
      });
      expect(normaliseLabValue({ biomarker: 'ldl_cholesterol', value: 120, unit: 'mg/dL' })).toMatchObject({
        ok: false,
        reason: 'inconvertible_unit',
      });
      expect(normaliseLabValue({ biomarker: 'ldl_cholesterol', value: 120, unit: 'mg/dL' })).toMatchObject({
        ok: true,
      });
    } finally {
      validate.mockRestore();
      convert.mockRestore();
    }
  });

  test('valid units that do not convert to the canonical one are inconvertible_unit', () => {
    const cases: Array<[string, string]> = [
      ['ldl_cholesterol', '%'], // a fraction is not a concentration
      ['ldl_cholesterol', 'mg'], // a mass is not a concentration
      ['hba1c', 'mmol/mol'], // IFCC: a different scale, not a unit factor
      ['hba1c', '1'], // dimensionless, which UCUM would turn into % by 100
      ['ferritin', 'pmol/L'], // no molar mass for ferritin
      ['hs_crp', 'nmol/L'], // no molar mass for CRP
      ['tsh', 'ng/mL'], // a mass is not an international unit
      ['tsh', 'U/L'], // the enzyme unit, not the international unit
    ];
    for (const [biomarker, unit] of cases) {
      expect([biomarker, unit, normaliseLabValue({ biomarker, value: 1, unit })]).toEqual([
        biomarker,
        unit,
        expect.objectContaining({ ok: false, reason: 'inconvertible_unit' }),
      ]);
    }
  });

  test('an unknown biomarker and a value that is not a finite number ≥ 0 are refused', () => {
    expect(normaliseLabValue({ biomarker: 'apob', value: 90, unit: 'mg/dL' })).toMatchObject({
      ok: false,
      reason: 'unknown_biomarker',
    });
    for (const v of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(normaliseLabValue({ biomarker: 'ldl_cholesterol', value: v, unit: 'mg/dL' })).toMatchObject({
        ok: false,
        reason: 'invalid_value',
      });
    }
  });

  test('a refusal never repeats the value or the unit sent, and the library logs nothing', () => {
    const log = jest.spyOn(console, 'log');
    try {
      for (const unit of ['mg / dL', 'mg{x}(dL)', '((', 'mmol/L'])
        for (const biomarker of ['ldl_cholesterol', 'ferritin']) {
          const result = normaliseLabValue({ biomarker, value: 123.45, unit });
          if (!result.ok) expect(result.message).not.toMatch(/123|\(|mmol/);
        }
      expect(log).not.toHaveBeenCalled();
    } finally {
      log.mockRestore();
    }
  });
});

describe('labRowsFromFhirBundle', () => {
  const loinc = (code: string, display: string): Observation['code'] => ({
    coding: [{ system: 'http://loinc.org', code, display }],
    text: display,
  });

  /** A lipid panel and a glucose from one draw, as a lab's FHIR server returns them from a search. */
  const bundle = (): Bundle => ({
    resourceType: 'Bundle',
    type: 'searchset',
    entry: [
      {
        fullUrl: 'urn:uuid:6d3c1c4e-0a3f-4a39-9a8e-5f0a4a3f7d11',
        resource: {
          resourceType: 'Observation',
          status: 'final',
          category: [
            {
              coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }],
            },
          ],
          code: loinc('13457-7', 'Cholesterol in LDL [Mass/volume] in Serum or Plasma by calculation'),
          subject: { reference: 'Patient/example' },
          effectiveDateTime: '2026-03-04T08:15:00+01:00',
          valueQuantity: { value: 3.36, unit: 'mmol/L', system: 'http://unitsofmeasure.org', code: 'mmol/L' },
        },
      },
      {
        fullUrl: 'urn:uuid:0b5e9d52-7c1a-4f7e-b0a2-2a9c8f1e6b42',
        resource: {
          resourceType: 'Observation',
          status: 'final',
          code: {
            coding: [
              { system: 'http://acme-lab.example/codes', code: 'GLU-F' },
              {
                system: 'http://loinc.org',
                code: '1558-6',
                display: 'Fasting glucose [Mass/volume] in Serum or Plasma',
              },
            ],
          },
          subject: { reference: 'Patient/example' },
          effectivePeriod: { start: '2026-03-04T08:15:00+01:00', end: '2026-03-04T08:20:00+01:00' },
          issued: '2026-03-05T10:00:00Z',
          valueQuantity: { value: 92, unit: 'mg/dL', system: 'http://unitsofmeasure.org', code: 'mg/dL' },
        },
      },
    ],
  });

  const refusalsOf = (input: unknown): FhirLabRefusal[] => {
    const result = labRowsFromFhirBundle(input);
    if (result.ok) throw new Error('expected a refusal');
    return result.refusals;
  };

  test('two Observations, one in mmol/L, map to rows in the canonical units on the day taken', () => {
    expect(labRowsFromFhirBundle(bundle())).toEqual({
      ok: true,
      rows: [
        {
          biomarker: 'ldl_cholesterol',
          value: 129.9144,
          unit: 'mg/dL',
          date: '2026-03-04',
          // Where each row was read, for the validator's refusals (a day in the future, a repeat).
          path: 'entry[0].resource',
          datePath: 'entry[0].resource.effectiveDateTime',
        },
        {
          biomarker: 'fasting_glucose',
          value: 92,
          unit: 'mg/dL',
          date: '2026-03-04',
          path: 'entry[1].resource',
          datePath: 'entry[1].resource.effectivePeriod.start',
        },
      ],
    });
  });

  test('collection and transaction bundles are read too; a bundle without entries has no rows', () => {
    expect(labRowsFromFhirBundle({ ...bundle(), type: 'collection' })).toMatchObject({ ok: true });
    expect(labRowsFromFhirBundle({ ...bundle(), type: 'transaction' })).toMatchObject({ ok: true });
    expect(labRowsFromFhirBundle({ resourceType: 'Bundle', type: 'collection' })).toEqual({ ok: true, rows: [] });
  });

  test('the date falls back to effectivePeriod.start, then to issued; a date alone is enough', () => {
    const b = bundle();
    const obs = b.entry?.[1].resource as Observation;
    delete obs.effectivePeriod;
    expect(labRowsFromFhirBundle(b)).toMatchObject({ ok: true, rows: [{}, { date: '2026-03-05' }] });
    obs.effectiveDateTime = '2026-02-28';
    expect(labRowsFromFhirBundle(b)).toMatchObject({ ok: true, rows: [{}, { date: '2026-02-28' }] });
    // The day where the sample was taken, not the UTC day (which would be 2026-03-05).
    obs.effectiveDateTime = '2026-03-04T23:30:00-05:00';
    expect(labRowsFromFhirBundle(b)).toMatchObject({ ok: true, rows: [{}, { date: '2026-03-04' }] });
  });

  test('a unit given only as text is read when the quantity is not coded in UCUM', () => {
    const b = bundle();
    (b.entry?.[1].resource as Observation).valueQuantity = { value: 5.1, unit: 'mmol/l' };
    expect(labRowsFromFhirBundle(b)).toMatchObject({ ok: true, rows: [{}, { value: 91.8816 }] });
  });

  test('what is not a Bundle is refused as not_a_bundle', () => {
    for (const input of [null, 'Bundle', [], { resourceType: 'Patient' }, {}]) {
      expect(refusalsOf(input)).toEqual([expect.objectContaining({ reason: 'not_a_bundle' })]);
    }
    expect(refusalsOf({ resourceType: 'Bundle', type: 'history', entry: [] })).toEqual([
      expect.objectContaining({ path: 'type', reason: 'malformed' }),
    ]);
    expect(refusalsOf({ resourceType: 'Bundle', type: 'collection', entry: [{ fullUrl: 'x' }] })).toEqual([
      expect.objectContaining({ path: 'entry[0].resource', reason: 'malformed' }),
    ]);
  });

  /** The bundle with its third entry changed by `change`, refused at `path` for `reason`. */
  const refusedEntry = (change: (obs: Observation) => unknown, path: string, reason: FhirLabRefusal['reason']) => {
    const b = bundle();
    const obs = structuredClone(b.entry?.[0].resource as Observation);
    const changed = change(obs) ?? obs;
    b.entry?.push({ resource: changed as Observation });
    expect(refusalsOf(b)).toEqual([{ path, reason, message: expect.any(String) }]);
  };

  test('each refusal names its entry and field', () => {
    refusedEntry(() => ({ resourceType: 'Patient', id: 'p1' }), 'entry[2].resource.resourceType', 'not_an_observation');
    refusedEntry(
      (obs) => {
        obs.code = loinc('2160-0', 'Creatinine [Mass/volume] in Serum or Plasma');
      },
      'entry[2].resource.code',
      'unknown_code',
    );
    refusedEntry(
      (obs) => {
        obs.code = { coding: [{ system: 'http://snomed.info/sct', code: '113079009' }] };
      },
      'entry[2].resource.code',
      'unknown_code',
    );
    refusedEntry(
      (obs) => {
        obs.code = { coding: [...(obs.code.coding ?? []), { system: 'http://loinc.org', code: '2085-9' }] };
      },
      'entry[2].resource.code',
      'conflicting_codes',
    );
    refusedEntry(
      (obs) => {
        delete obs.valueQuantity;
        obs.valueString = 'see report';
      },
      'entry[2].resource.valueQuantity',
      'no_quantity',
    );
    refusedEntry(
      (obs) => {
        obs.valueQuantity = { unit: 'mmol/L', system: 'http://unitsofmeasure.org', code: 'mmol/L' };
      },
      'entry[2].resource.valueQuantity',
      'no_quantity',
    );
    refusedEntry(
      (obs) => {
        obs.valueQuantity = { ...obs.valueQuantity, comparator: '<' };
      },
      'entry[2].resource.valueQuantity.comparator',
      'inexact_quantity',
    );
    refusedEntry(
      (obs) => {
        obs.valueQuantity = { value: 3.36, system: 'http://unitsofmeasure.org', code: 'mmol/mol' };
      },
      'entry[2].resource.valueQuantity',
      'inconvertible_unit',
    );
    refusedEntry(
      (obs) => {
        obs.valueQuantity = { value: 3.36, unit: 'millimoles per litre' };
      },
      'entry[2].resource.valueQuantity',
      'unknown_unit',
    );
    refusedEntry(
      (obs) => {
        delete obs.effectiveDateTime;
      },
      'entry[2].resource.effectiveDateTime',
      'no_date',
    );
    refusedEntry(
      (obs) => {
        obs.effectiveDateTime = '2026-03';
      },
      'entry[2].resource.effectiveDateTime',
      'no_date',
    );
    refusedEntry(
      (obs) => {
        delete obs.effectiveDateTime;
        obs.effectivePeriod = { start: '2026-02-30T08:00:00Z' };
      },
      'entry[2].resource.effectivePeriod.start',
      'no_date',
    );
    refusedEntry(
      (obs) => {
        obs.status = 'entered-in-error';
      },
      'entry[2].resource.status',
      'unusable_status',
    );
    refusedEntry(
      (obs) => ({ ...obs, valueQuantity: { ...obs.valueQuantity, value: '3.36' } }),
      'entry[2].resource.valueQuantity.value',
      'malformed',
    );
    refusedEntry((obs) => ({ ...obs, status: undefined }), 'entry[2].resource.status', 'malformed');
  });

  test('every refused entry is listed, and the bundle maps to no rows', () => {
    const b = bundle();
    (b.entry?.[0].resource as Observation).valueQuantity = undefined;
    (b.entry?.[1].resource as Observation).status = 'preliminary';
    expect(refusalsOf(b).map(({ path }) => path)).toEqual([
      'entry[0].resource.valueQuantity',
      'entry[1].resource.status',
    ]);
  });

  test('no refusal message carries a value from the bundle', () => {
    const b = bundle();
    (b.entry?.[0].resource as Observation).valueQuantity = { value: 3.36, unit: 'mmol/mol' };
    (b.entry?.[1].resource as Observation).effectiveDateTime = '2026-02-31';
    delete (b.entry?.[1].resource as Observation).effectivePeriod;
    for (const { message } of refusalsOf(b)) expect(message).not.toMatch(/3\.36|mmol\/mol|2026/);
  });
});
