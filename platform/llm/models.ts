/**
 * Model resolution (docs/operations.md#models): what a configured model name stands for. The aliases
 * `opus`, `sonnet` and `haiku` resolve to their model ids, or to the id an ANTHROPIC_DEFAULT_*_MODEL
 * variable names (a gateway's own id, on OpenRouter say); any other name is an exact id, pinned as
 * given. The LLM layer resolves every request's model here, so the request, the ledger
 * (`llm_calls.model`) and the price all follow the resolved id.
 */

/** Each alias, the model id it stands for with no override, and the variable that overrides it. */
const MODEL_ALIASES = {
  opus: { id: 'claude-opus-4-7', override: 'ANTHROPIC_DEFAULT_OPUS_MODEL' },
  sonnet: { id: 'claude-sonnet-4-6', override: 'ANTHROPIC_DEFAULT_SONNET_MODEL' },
  haiku: { id: 'claude-haiku-4-5', override: 'ANTHROPIC_DEFAULT_HAIKU_MODEL' },
} as const;

type ModelAlias = keyof typeof MODEL_ALIASES;
type OverrideVariable = (typeof MODEL_ALIASES)[ModelAlias]['override'];

/** The override variables as configuration holds them (platform/config.ts); unset ones are absent. */
export type ModelOverrides = Partial<Record<OverrideVariable, string>>;

const isAlias = (name: string): name is ModelAlias => Object.hasOwn(MODEL_ALIASES, name);

/** The model id that `name` resolves to. An override is taken as given: it is never resolved again. */
export function resolveModel(name: string, overrides: ModelOverrides = {}): string {
  if (!isAlias(name)) return name;
  const alias = MODEL_ALIASES[name];
  return overrides[alias.override] ?? alias.id;
}
