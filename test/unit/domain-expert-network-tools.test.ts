/**
 * The Domain Expert's network tools as the model meets them (activities/agents/domain-expert/network-tools.ts),
 * against the E-utilities stand-in: a search returns citable articles; a query carrying the user's value, memory or
 * words is never sent; an outside failure is an error result the model can work around; every call is counted by
 * tool and outcome; and without network tools the consultation offers only the offline ones.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Pool } from 'pg';
import { startEutilsStandIn } from '../../dev/stand-ins/eutils';
import type { StandInServer } from '../../dev/stand-ins/http-knobs';
import { domainExpertToolDefinitions, runDomainExpertTool } from '../../activities/agents/domain-expert/run-tool';
import type { ToolContext } from '../../activities/agents/domain-expert/tool-contract';
import { createMemoryToolResultCache } from '../../platform/literature/cache';
import { createCircuitBreaker } from '../../platform/literature/circuit';
import { createPubMedClient } from '../../platform/literature/pubmed';
import { createMemoryRateLimiter } from '../../platform/literature/rate-limit';
import { processRegistry } from '../../platform/metrics';
import { startTracing } from '../../platform/tracing';
import { parsePrometheusText, total } from '../support/prometheus';

let eutils: StandInServer;
beforeAll(async () => {
  eutils = await startEutilsStandIn();
});
afterAll(() => eutils.close());
beforeEach(() => {
  eutils.reset();
  eutils.requests.length = 0;
});

function context(): ToolContext {
  const pubmed = createPubMedClient({
    baseUrl: `${eutils.url}/entrez/eutils`,
    tool: 'amy-turn-service',
    email: 'ops@amy.example',
    limiter: createMemoryRateLimiter({ sleep: () => Promise.resolve() }),
    cache: createMemoryToolResultCache(),
    circuit: createCircuitBreaker({ failureThreshold: 2, coolDownMs: 60_000 }),
    timeoutMs: 2000,
  });
  return {
    pool: {} as Pool,
    turnId: 'turn_x',
    userId: 'usr_x',
    now: new Date('2026-12-06T00:00:00Z'),
    network: {
      tools: { pubmed, dataCommons: null },
      privacy: {
        memoryTexts: ['Training for the Lisbon half marathon in March'],
        userMessages: ['Why has my heart rate variability dropped since I started the new night shifts at the bakery?'],
        userValues: [
          { value: 1984, kind: 'salient' },
          { value: 131, kind: 'salient' },
          { value: 47.5, kind: 'row' },
        ],
        userIdentifiers: ['usr_x', 'margarethe'],
      },
    },
  };
}

const counted = async (tool: string, outcome: string) =>
  total(parsePrometheusText(await processRegistry().metrics()), 'amy_domain_expert_tool_calls_total', {
    tool,
    outcome,
  });

test('pubmed_search returns articles with their PubMed URLs, and is counted', async () => {
  const before = await counted('pubmed_search', 'ok');
  const outcome = await runDomainExpertTool('pubmed_search', { topic: 'heart rate variability', max: 2 }, context());
  expect(outcome.isError).toBe(false);
  const result = JSON.parse(outcome.content) as { articles: { url: string; pmid: string }[] };
  expect(result.articles.length).toBeGreaterThan(0);
  for (const article of result.articles) expect(article.url).toBe(`https://pubmed.ncbi.nlm.nih.gov/${article.pmid}/`);
  expect((await counted('pubmed_search', 'ok')) - before).toBe(1);
});

test.each([
  ['a value of the user’s', 'LDL 131 mg/dL statin'],
  ['a birth year', 'heart rate variability born 1984'],
  ['a row value, spelled out', 'heart rate variability forty seven point five'],
  ['the memory shown to the model', 'training for the Lisbon half marathon in March'],
  ['the user’s own words', 'heart rate variability dropped since I started the new night shifts at the bakery'],
  ['the user’s name', 'margarethe heart rate variability'],
])('a query carrying %s is never sent, and the model is told why without it', async (_what, topic) => {
  const before = await counted('pubmed_search', 'privacy_refused');
  const outcome = await runDomainExpertTool('pubmed_search', { topic }, context());
  expect(outcome).toMatchObject({ isError: true, failure: 'privacy_refused' });
  expect(outcome.content).toMatch(/^not sent: /);
  expect(outcome.content.toLowerCase()).not.toContain(topic.toLowerCase());
  expect(eutils.requests).toEqual([]);
  expect((await counted('pubmed_search', 'privacy_refused')) - before).toBe(1);
});

test('an outside failure is an error result the model can work around, and a second opens the circuit', async () => {
  eutils.fail({ kind: 'server_error', status: 503 });
  const ctx = context();
  const first = await runDomainExpertTool('pubmed_search', { topic: 'resting heart rate' }, ctx);
  expect(first).toMatchObject({ isError: true, failure: 'tool_unavailable' });
  expect(first.content).toMatch(
    /PubMed could not be reached .*say in the answer that the literature could not be searched/,
  );
  await runDomainExpertTool('pubmed_search', { topic: 'sleep duration' }, ctx);
  const sent = eutils.requests.length;
  const third = await runDomainExpertTool('pubmed_search', { topic: 'ldl cholesterol' }, ctx);
  expect(third).toMatchObject({ isError: true, failure: 'circuit_open' });
  expect(eutils.requests.length).toBe(sent);
});

test('without network tools, only the offline tools are offered, and pubmed_search is an unknown tool', async () => {
  expect(domainExpertToolDefinitions(undefined).map((t) => t.name)).toEqual([
    'range_compare',
    'literature_priors',
    'user_profile',
  ]);
  const offline: ToolContext = { ...context(), network: undefined };
  const outcome = await runDomainExpertTool('pubmed_search', { topic: 'sleep' }, offline);
  expect(outcome).toMatchObject({ isError: true });
  expect(outcome.content).toMatch(/unknown tool "pubmed_search"/);
  const on = context();
  expect(domainExpertToolDefinitions(on.network!.tools).map((t) => t.name)).toContain('pubmed_search');
  expect(domainExpertToolDefinitions(on.network!.tools).map((t) => t.name)).not.toContain('population_statistic');
});

test('each call has its span: the tool, the turn and the outcome, never the query or the result', async () => {
  const exporter = new InMemorySpanExporter();
  const tracing = startTracing({ defaultServiceName: 'amy-worker', env: {}, exporter });
  try {
    const topic = 'heart rate variability aging';
    await runDomainExpertTool('pubmed_search', { topic }, context());
    await runDomainExpertTool('pubmed_search', { topic: 'margarethe heart rate variability' }, context());
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => [span.name, span.attributes['amy.tool.outcome']])).toEqual([
      ['execute_tool pubmed_search', 'ok'],
      ['execute_tool pubmed_search', 'privacy_refused'],
    ]);
    for (const span of spans) {
      expect(span.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'pubmed_search',
        'amy.turn_id': 'turn_x',
      });
      const recorded = JSON.stringify([span.attributes, span.events]);
      expect(recorded).not.toMatch(/variability|margarethe|pubmed\.ncbi/);
    }
    expect(spans[1].status.code).toBe(SpanStatusCode.ERROR);
  } finally {
    await tracing.shutdown();
  }
});
