/**
 * Each request to the Python gates processes (./index.ts) is a span: `gates run` (the seven gates on a
 * turn's findings) or `gates series` (a finding's series cut from the user's rows), with the number of
 * findings and, for `run`, each one's verdict. Never a series' values.
 */
import { wrapMethods } from '../method-wrappers';
import { inSpan } from '../spans';
import type { GatesRunner } from './gates-runner';

const ATTR_FINDINGS = 'amy.gates.findings';
const ATTR_VERDICTS = 'amy.gates.verdicts';

/** The gates runner with each request in its span. */
export function traceGates(gates: GatesRunner): GatesRunner {
  return wrapMethods(gates, {
    run: (run, series) =>
      inSpan('gates run', { attributes: { [ATTR_FINDINGS]: series.length } }, async (span) => {
        const outcomes = await run();
        span.setAttribute(
          ATTR_VERDICTS,
          outcomes.map((outcome) => outcome.verdict),
        );
        return outcomes;
      }),
    buildSeries: (buildSeries, _data, specs) =>
      inSpan('gates series', { attributes: { [ATTR_FINDINGS]: specs.length } }, buildSeries),
  });
}
