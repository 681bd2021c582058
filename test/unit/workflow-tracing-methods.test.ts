/**
 * workflows/tracing-interceptors.ts passes a traced run's calls on to OpenTelemetry's workflow interceptors
 * by name, without loading their module for untraced runs: its lists must name every method they have.
 */
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { TRACED_METHODS } from '../../workflows/tracing-interceptors';

const methodsOf = (Interceptor: { prototype: object }) =>
  Object.getOwnPropertyNames(Interceptor.prototype)
    .filter((name) => name !== 'constructor')
    .sort();

test.each([
  ['inbound', OpenTelemetryInboundInterceptor],
  ['outbound', OpenTelemetryOutboundInterceptor],
  ['internals', OpenTelemetryInternalsInterceptor],
] as const)("the %s interceptor's methods are all passed on", (kind, Interceptor) => {
  expect([...TRACED_METHODS[kind]].sort()).toEqual(methodsOf(Interceptor));
});
