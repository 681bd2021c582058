/**
 * A `lab_report.completed` event to lab rows in the form a client sends them (LabRowInput), for the caller
 * to pass through labRowsFromInput (docs/terra-mapping.md#lab-reports). A result is matched to our
 * biomarkers by its LOINC code only: Terra's own biomarker key is its vocabulary, not ours. A result that
 * cannot be stored is left out with why, never failing the report: labRowsFromInput refuses a whole
 * request for one bad row, so each row is put through it here first, alone.
 */
import { labBiomarkerForLoinc } from '../../health-data/labs';
import { firstPositions, labRowsFromInput, type LabRowInput } from '../../health-data/validate';
import { dayOf, isObject, RecordReader, Skips, type Key } from './read';
import { TerraMappingError, type SkippedField } from './types';

/** The mapping has no clock: whether a day is after today is checked where the rows are written. */
const NO_LATER_THAN = '9999-12-31';

/** Where each field of a row comes from in a result, for a refusal's path. */
const ROW_SOURCE: Record<keyof LabRowInput, Key[]> = {
  date: ['source', 'collection_date'],
  biomarker: ['biomarker', 'loinc_code'],
  value: ['measurement', 'numeric'],
  unit: ['measurement', 'ucum_code'],
};

function reportData(event: unknown): { results: unknown[]; reportDay: string | null; reader: RecordReader } {
  if (!isObject(event)) throw new TerraMappingError('the event is not a JSON object');
  if (event.type !== 'lab_report.completed') throw new TerraMappingError('type is not lab_report.completed');
  const { data } = event;
  if (!isObject(data)) throw new TerraMappingError('data is missing or not an object');
  if (!Array.isArray(data.results)) throw new TerraMappingError('data.results is missing or not an array');
  const reader = new RecordReader(data, 'data', new Skips());
  const reportDate = reader.text(['report_date']);
  return { results: data.results, reportDay: reportDate === undefined ? null : dayOf(reportDate), reader };
}

/** One result to a row, or null with why it was left out (noted on the reader). */
function resultRow(reader: RecordReader, i: number, reportDay: string | null): LabRowInput | null {
  const at = (...keys: Key[]) => ['results', i, ...keys];
  const skip = (keys: Key[], reason: string) => {
    reader.skips.add(reader.pathOf(keys), reason);
    return null;
  };
  if (!isObject(reader.get(at()))) return skip(at(), 'is not an object');
  if (reader.get(at('biomarker', 'key')) === undefined) return skip(at('biomarker', 'key'), 'unmatched biomarker');
  const loinc = reader.text(at('biomarker', 'loinc_code'));
  if (loinc === undefined) return skip(at('biomarker', 'loinc_code'), 'no LOINC code');
  const spec = labBiomarkerForLoinc(loinc);
  if (!spec) return skip(at('biomarker', 'loinc_code'), 'the LOINC code is not one of the biomarkers Amy stores');
  const type = reader.get(at('measurement', 'type'));
  if (type === 'bounded') return skip(at('measurement'), 'a bounded value (like "<5"), not a number');
  if (type !== 'numeric') return skip(at('measurement', 'type'), 'not numeric');
  const value = reader.number(at('measurement', 'numeric'));
  if (value === undefined) return skip(at('measurement', 'numeric'), 'no numeric value');
  const unit = reader.text(at('measurement', 'ucum_code')) ?? reader.text(at('measurement', 'units'));
  if (unit === undefined) return skip(at('measurement'), 'no unit');
  const collected = reader.text(at('source', 'collection_date'));
  const date = (collected === undefined ? null : dayOf(collected)) ?? reportDay;
  if (date === null) return skip(at('source', 'collection_date'), 'no collection date, nor a report_date');
  return { date, biomarker: spec.name, value, unit };
}

/**
 * A `lab_report.completed` event's body to rows for labRowsFromInput, mapped by LOINC code to our
 * biomarkers; results that do not map are skipped with a reason (unmatched biomarker, no LOINC, not
 * numeric, bounded value like "<5", no unit, a unit that does not convert, a value out of range). The same
 * biomarker twice on one day: the first is kept.
 */
export function mapLabReport(event: unknown): { rows: LabRowInput[]; skipped: SkippedField[] } {
  const { results, reportDay, reader } = reportData(event);
  const rows: LabRowInput[] = [];
  const seen = firstPositions<string>();
  for (const i of results.keys()) {
    const row = resultRow(reader, i, reportDay);
    if (row === null) continue;
    const path = reader.pathOf(['results', i]);
    const checked = labRowsFromInput([row], NO_LATER_THAN);
    if (!checked.ok) {
      const field = checked.problem.field.replace(/^rows\[0\]\./, '') as keyof LabRowInput;
      reader.skips.add(
        reader.pathOf(['results', i, ...(ROW_SOURCE[field] ?? [])]),
        `${field}: ${checked.problem.message}`,
      );
      continue;
    }
    const earlier = seen(`${row.biomarker} ${row.date}`, path);
    if (earlier !== undefined) {
      reader.skips.add(path, `repeats the biomarker and day of ${earlier}`);
      continue;
    }
    rows.push(row);
  }
  return { rows, skipped: reader.skips.list };
}
