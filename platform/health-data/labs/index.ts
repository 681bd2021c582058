/**
 * Lab results: the biomarkers the service knows (LOINC code, canonical unit, molar mass; their table is a
 * contract, contracts/lab-biomarkers.ts), unit conversion with UCUM, and the mapping of a FHIR R4 Bundle of
 * Observations onto lab rows. Pure: no I/O, no clock.
 * docs/health-data.md#lab-results describes it for senders.
 */
export {
  LAB_BIOMARKERS,
  LAB_BIOMARKER_NAMES,
  labBiomarker,
  labBiomarkerForLoinc,
  type LabBiomarker,
} from '../../../contracts/lab-biomarkers';
export { normaliseLabValue, type LabUnitRefusalReason } from './units';
export { labRowsFromFhirBundle, type FhirLabRefusal, type FhirLabRow, type LabRow } from './fhir';
