/**
 * The Domain Expert's network tools (docs/design.md#domain-expert), present only when AMY_DE_NETWORK_TOOLS is on:
 * `pubmed_search` (NCBI E-utilities) and `population_statistic` (Google Data Commons). Every query passes the
 * privacy guard first (./outgoing-privacy.ts, checks/outgoing-query-guard.ts); a refused one is never sent, and the
 * model is told why in words that do not repeat it. A failure of the outside service (a timeout, a 429, a 5xx, an
 * open circuit) is the tool's, not the turn's: it comes back as an error result the model can work around, saying
 * the literature could not be reached.
 */
import { z } from 'zod';
import { guardOutgoingQuery } from '../../../checks/outgoing-query-guard';
import { NetworkToolError } from '../../../platform/literature/errors';
import { PUBMED_MAX_ARTICLES } from '../../../platform/literature/pubmed';
import { defineTool, ToolRequestError, type ToolContext } from './tool-contract';

function networkOf(ctx: ToolContext) {
  if (!ctx.network) throw new ToolRequestError('network tools are off in this service');
  return ctx.network;
}

/** Refuses, before anything is sent, a query that carries something of the user's. */
function guard(ctx: ToolContext, query: string): void {
  const verdict = guardOutgoingQuery({ query, ...networkOf(ctx).privacy });
  if (!verdict.allowed) {
    throw new ToolRequestError(
      `not sent: ${verdict.message}. Search for the general topic in your own words, without the user's details.`,
      'privacy_refused',
    );
  }
}

/** An outside service's failure, as the model reads it. */
function unreachable(err: unknown, what: string): never {
  if (err instanceof NetworkToolError) {
    const kind = err.name.replace(/Error$/, '');
    throw new ToolRequestError(
      `${err.service} could not be reached (${kind}): ${what} is unavailable for now. ` +
        'Answer from the other tools, and say in the answer that the literature could not be searched.',
      kind.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase(),
    );
  }
  throw err;
}

export const pubmedSearchTool = defineTool({
  name: 'pubmed_search',
  description:
    "Search PubMed for articles on a general health topic (never the user's own details or numbers). Returns the most relevant articles: title, journal, year, PMID and the PubMed URL to cite.",
  input: z
    .object({
      topic: z.string().trim().min(3).max(160).describe('A short general topic, e.g. "heart rate variability aging"'),
      max: z.number().int().min(1).max(PUBMED_MAX_ARTICLES).default(5),
    })
    .strict(),
  run: async ({ topic, max }, ctx) => {
    guard(ctx, topic);
    try {
      const { articles } = await networkOf(ctx).tools.pubmed.search(topic, { max });
      return articles.length > 0 ? { topic, articles } : { topic, articles, note: 'PubMed found no article' };
    } catch (err) {
      return unreachable(err, 'PubMed search');
    }
  },
});

/** Data Commons ids: letters, digits, `_`, `/` and `.` (a variable like Percent_Person_WithHighBloodPressure, a place like country/USA). */
const DCID = z.string().regex(/^[A-Za-z0-9_./]{2,160}$/, 'a Data Commons id (letters, digits, _ / .)');

export const populationStatisticTool = defineTool({
  name: 'population_statistic',
  description:
    'A population statistic from Google Data Commons: the value of a statistical variable (e.g. "Percent_Person_WithHighBloodPressure", "Mean_Height_Person_Female") for a place (e.g. "country/USA", "geoId/06"), the latest or at a date, with its source.',
  input: z
    .object({
      variable: DCID.describe("The statistical variable's DCID"),
      entity: DCID.describe("The place's DCID"),
      date: z
        .string()
        .regex(/^\d{4}(-\d{2}(-\d{2})?)?$/)
        .optional()
        .describe('YYYY, YYYY-MM or YYYY-MM-DD'),
    })
    .strict(),
  run: async ({ variable, entity, date }, ctx) => {
    guard(ctx, [variable, entity, date ?? ''].join(' ').trim());
    const client = networkOf(ctx).tools.dataCommons;
    if (!client) throw new ToolRequestError('Data Commons is not configured in this service');
    try {
      return await client.observe({ variable, entity, ...(date ? { date } : {}) });
    } catch (err) {
      return unreachable(err, 'Data Commons');
    }
  },
});
