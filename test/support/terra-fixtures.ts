/**
 * Terra's published webhook examples (test/fixtures/terra/README.md says where they come from). The files are
 * never edited: a test that needs a variation changes the copy this returns.
 */
import fs from 'node:fs';
import path from 'node:path';

/** The examples there are, one file each. */
type TerraExampleName =
  | 'auth_success'
  | 'auth_cancelled'
  | 'deauth'
  | 'user_reauth'
  | 'access_revoked'
  | 'permission_change'
  | 'connection_error'
  | 'large_request_processing'
  | 'large_request_sending'
  | 'daily'
  | 'sleep'
  | 'body'
  | 'activity'
  | 'lab_report_completed'
  | 'lab_report_failed';

const DIR = path.resolve(__dirname, '..', 'fixtures', 'terra');

/** The example's body as Terra would send it, parsed afresh: a deep copy the caller may change. */
export function terraExample(name: TerraExampleName): unknown {
  return JSON.parse(fs.readFileSync(path.join(DIR, `${name}.json`), 'utf8')) as unknown;
}
