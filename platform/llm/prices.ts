/**
 * USD per million tokens, per model (Anthropic list prices, standard tier). Turns the usage the API
 * reports into `llm_calls.cost_usd`. Prices are looked up by the resolved model id: aliases are resolved
 * before a call is made (./models.ts), never here.
 */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
}

const PRICES = {
  'claude-opus-4-7': { inputPerMTok: 5, outputPerMTok: 25 },
  'claude-sonnet-4-6': { inputPerMTok: 3, outputPerMTok: 15 },
  'claude-haiku-4-5': { inputPerMTok: 1, outputPerMTok: 5 },
} as const satisfies Record<string, ModelPrice>;

type PricedModel = keyof typeof PRICES;

/**
 * A model we have no price for is billed at the most expensive entry: the cost warning and the
 * per-turn cost may then run high, but never silently at zero or under the real bill.
 */
const MOST_EXPENSIVE: ModelPrice = Object.values(PRICES).reduce((a, b) =>
  a.inputPerMTok + a.outputPerMTok >= b.inputPerMTok + b.outputPerMTok ? a : b,
);

/** Dated snapshots (`claude-haiku-4-5-20251001`) and `-latest` cost what their family costs. */
const SNAPSHOT_SUFFIX = /-(\d{8}|latest)$/;

export function priceOf(model: string): ModelPrice {
  const name = model.replace(SNAPSHOT_SUFFIX, '');
  if (Object.hasOwn(PRICES, name)) return PRICES[name as PricedModel];
  return MOST_EXPENSIVE;
}

/** Web search, the Messages API's server tool, is billed per search on top of the tokens: $10 per 1,000. */
const WEB_SEARCH_USD_PER_REQUEST = 10 / 1000;

/**
 * Cost of a call, rounded to the ledger's precision (`Decimal(12,6)`), so the sum a workflow adds
 * up from call results equals the sum of `llm_calls.cost_usd`. A call's server tool requests (its
 * `usage.server_tool_use`) are part of its cost. Web fetch has no fee beyond the tokens of what it fetched.
 */
export function costUsd(
  model: string,
  inputTokens: number,
  outputTokens: number,
  serverTools: { webSearchRequests: number } = { webSearchRequests: 0 },
): number {
  const price = priceOf(model);
  const exact =
    (inputTokens * price.inputPerMTok + outputTokens * price.outputPerMTok) / 1_000_000 +
    serverTools.webSearchRequests * WEB_SEARCH_USD_PER_REQUEST;
  return Math.round(exact * 1_000_000) / 1_000_000;
}
