/**
 * The validator's lab rules (platform/health-data/validate.ts): rows sent as rows are converted to their
 * canonical units and refused by row and field (`rows[3].unit`); rows read from a FHIR bundle are refused by
 * their path; a day in the future, a value outside the biomarker's accepted range and the same biomarker on
 * the same day twice are refused either way; no message quotes a value.
 */
import { labRowsFromFhirBundle, type FhirLabRow } from '../../platform/health-data/labs';
import { fhirLabRowsProblem, labRowsFromInput, type LabRowInput } from '../../platform/health-data/validate';

const TODAY = '2026-11-26';
const ldl = (values: Partial<LabRowInput> = {}): LabRowInput => ({
  date: '2026-11-20',
  biomarker: 'ldl_cholesterol',
  value: 130,
  unit: 'mg/dL',
  ...values,
});

describe('labRowsFromInput', () => {
  test('converts each value to its canonical unit; today is the last day accepted', () => {
    const result = labRowsFromInput(
      [
        ldl(),
        ldl({ date: TODAY, value: 3.36, unit: 'mmol/L' }),
        { ...ldl(), biomarker: 'tsh', value: 2, unit: 'uIU/mL' },
      ],
      TODAY,
    );
    expect(result).toEqual({
      ok: true,
      rows: [
        { biomarker: 'ldl_cholesterol', value: 130, unit: 'mg/dL', date: '2026-11-20' },
        { biomarker: 'ldl_cholesterol', value: 129.9144, unit: 'mg/dL', date: TODAY },
        { biomarker: 'tsh', value: 2, unit: 'mIU/L', date: '2026-11-20' },
      ],
    });
  });

  test.each<[string, LabRowInput[], string]>([
    ['an unknown biomarker', [ldl(), ldl({ biomarker: 'cortisol' })], 'rows[1].biomarker'],
    ['a unit UCUM does not know', [ldl({ unit: 'MG/DL' })], 'rows[0].unit'],
    ['a unit that does not convert', [ldl(), ldl({ date: '2026-11-21', unit: 'mmol/mol' })], 'rows[1].unit'],
    ['a negative value', [ldl({ value: -1 })], 'rows[0].value'],
    ['a value past the accepted range once converted', [ldl({ value: 130, unit: 'mmol/L' })], 'rows[0].value'],
    ['HbA1c below 2 %', [ldl({ biomarker: 'hba1c', value: 1.5, unit: '%' })], 'rows[0].value'],
    ['a future day', [ldl({ date: '2026-11-27' })], 'rows[0].date'],
    ['an impossible day', [ldl({ date: '2026-02-30' })], 'rows[0].date'],
    ['the same biomarker and day twice', [ldl(), ldl({ value: 3.1, unit: 'mmol/L' })], 'rows[1].date'],
  ])('%s is refused, naming the row and field', (_kind, rows, field) => {
    const result = labRowsFromInput(rows, TODAY);
    expect(result).toMatchObject({ ok: false, problem: { field } });
  });

  test('the same day for two biomarkers, or one biomarker on two days, is fine', () => {
    const rows = [ldl(), ldl({ biomarker: 'hdl_cholesterol', value: 55 }), ldl({ date: '2026-11-21' })];
    expect(labRowsFromInput(rows, TODAY)).toMatchObject({ ok: true });
  });

  test('the first problem in row order is the one told', () => {
    const result = labRowsFromInput([ldl(), ldl({ unit: 'bogus' }), ldl({ date: '2027-01-01' })], TODAY);
    expect(result).toMatchObject({ ok: false, problem: { field: 'rows[1].unit' } });
  });

  test('no message quotes the value, the unit or the day sent', () => {
    const refused = [
      ldl({ value: 4242.5 }),
      ldl({ value: 4242.5, unit: 'mmol/L' }),
      ldl({ unit: 'xyz/4242' }),
      ldl({ date: '2099-12-31' }),
    ];
    for (const row of refused) {
      const result = labRowsFromInput([row], TODAY);
      if (result.ok) throw new Error('expected a refusal');
      expect(result.problem.message).not.toMatch(/4242|xyz|2099/);
    }
  });
});

describe('fhirLabRowsProblem', () => {
  const observation = (
    day: string,
    value: number,
    unit = 'mg/dL',
    at: 'effectiveDateTime' | 'issued' = 'effectiveDateTime',
  ) => ({
    resource: {
      resourceType: 'Observation',
      status: 'final',
      code: { coding: [{ system: 'http://loinc.org', code: '13457-7' }] },
      valueQuantity: { value, unit, system: 'http://unitsofmeasure.org', code: unit },
      [at]: `${day}T08:00:00Z`,
    },
  });
  const rowsOf = (...entry: unknown[]): FhirLabRow[] => {
    const mapped = labRowsFromFhirBundle({ resourceType: 'Bundle', type: 'collection', entry });
    if (!mapped.ok) throw new Error('expected rows');
    return mapped.rows;
  };

  test('rows in range, on different days, pass', () => {
    expect(
      fhirLabRowsProblem(rowsOf(observation('2026-11-01', 120), observation('2026-11-02', 3.2, 'mmol/L')), TODAY),
    ).toBeNull();
  });

  test('a future day is named by the field the day was read from', () => {
    expect(
      fhirLabRowsProblem(
        rowsOf(observation('2026-11-01', 120), observation('2026-12-01', 1, 'mg/dL', 'issued')),
        TODAY,
      ),
    ).toMatchObject({
      field: 'entry[1].resource.issued',
    });
  });

  test('an implausible value is named by its valueQuantity.value', () => {
    expect(fhirLabRowsProblem(rowsOf(observation('2026-11-01', 5000)), TODAY)).toMatchObject({
      field: 'entry[0].resource.valueQuantity.value',
    });
  });

  test('the same biomarker on the same day twice names the later entry', () => {
    const problem = fhirLabRowsProblem(
      rowsOf(observation('2026-11-01', 120), observation('2026-11-01', 3.1, 'mmol/L')),
      TODAY,
    );
    expect(problem).toEqual({
      field: 'entry[1].resource.effectiveDateTime',
      message: 'repeats the biomarker and date of entry[0].resource',
    });
  });
});
