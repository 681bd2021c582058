/**
 * Each request to the Python gates processes (./gates.ts) is a span: `gates run` (the seven gates on a
 * turn's findings) or `gates series` (a finding's series cut from the user's rows), with the number of
 * findings and, for `run`, each one's verdict. Never a series' values.
 */
import { inSpan } from './spans';
import type { GatesRunner } from './gates';

const ATTR_FINDINGS = 'amy.gates.findings';
const ATTR_VERDICTS = 'amy.gates.verdicts';

/** The gates runner with each request in its span. */
export function traceGates(gates: GatesRunner): GatesRunner {
  return {
    get pids() {
      return gates.pids;
    },
    run: (series, options) =>
      inSpan('gates run', { attributes: { [ATTR_FINDINGS]: series.length } }, async (span) => {
        const outcomes = await gates.run(series, options);
        span.setAttribute(
          ATTR_VERDICTS,
          outcomes.map((outcome) => outcome.verdict),
        );
        return outcomes;
      }),
    buildSeries: (data, specs, options) =>
      inSpan('gates series', { attributes: { [ATTR_FINDINGS]: specs.length } }, () =>
        gates.buildSeries(data, specs, options),
      ),
    close: () => gates.close(),
  };
}
