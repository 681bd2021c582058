/**
 * Model resolution (docs/operations.md#models): `opus`, `sonnet` and `haiku` resolve to their model ids,
 * or to what ANTHROPIC_DEFAULT_*_MODEL names; any other name is an exact id, pinned as given. The roles'
 * defaults are the ones the orchestration contract gives (the Data Science model pinned, not an alias).
 */
import { loadConfig } from '../../platform/config';
import { resolveModel } from '../../platform/llm/models';
import { costUsd } from '../../platform/llm/prices';

test('the aliases resolve to their model ids', () => {
  expect(resolveModel('opus')).toBe('claude-opus-4-7');
  expect(resolveModel('sonnet')).toBe('claude-sonnet-4-6');
  expect(resolveModel('haiku')).toBe('claude-haiku-4-5');
});

test('an alias resolves to its override, taken as given; the other aliases keep their own ids', () => {
  const overrides = {
    ANTHROPIC_DEFAULT_OPUS_MODEL: 'anthropic/claude-opus-4.7',
    ANTHROPIC_DEFAULT_HAIKU_MODEL: 'sonnet',
  };
  expect(resolveModel('opus', overrides)).toBe('anthropic/claude-opus-4.7');
  // An override is a model id, never an alias to resolve again.
  expect(resolveModel('haiku', overrides)).toBe('sonnet');
  expect(resolveModel('sonnet', overrides)).toBe('claude-sonnet-4-6');
});

test('exact ids are pinned as given, whatever the overrides', () => {
  const overrides = {
    ANTHROPIC_DEFAULT_OPUS_MODEL: 'gateway-opus',
    ANTHROPIC_DEFAULT_SONNET_MODEL: 'gateway-sonnet',
    ANTHROPIC_DEFAULT_HAIKU_MODEL: 'gateway-haiku',
  };
  for (const id of ['claude-sonnet-4-6', 'claude-opus-4-7', 'claude-haiku-4-5-20251001', 'Opus', 'constructor']) {
    expect(resolveModel(id, overrides)).toBe(id);
  }
});

test('the roles default as the contract says, and the override variables are read from the environment', () => {
  const config = loadConfig({
    DATABASE_URL: 'postgresql://localhost/amy',
    ANTHROPIC_DEFAULT_SONNET_MODEL: 'gw-sonnet',
  });
  const roles = [config.AMY_MODEL, config.AMY_FAST_MODEL, config.AMY_DS_MODEL, config.AMY_VALIDATOR_MODEL];
  expect(roles).toEqual(['opus', 'sonnet', 'claude-sonnet-4-6', 'opus']);
  expect(roles.map((name) => resolveModel(name, config))).toEqual([
    'claude-opus-4-7',
    'gw-sonnet',
    'claude-sonnet-4-6',
    'claude-opus-4-7',
  ]);
});

test('prices follow the resolved id: an alias itself is not a priced model', () => {
  expect(costUsd(resolveModel('haiku'), 1_000_000, 0)).toBe(1);
  expect(costUsd(resolveModel('sonnet'), 1_000_000, 0)).toBe(3);
  // Resolution happens once, before the call: an unresolved name is billed as an unknown model (the most expensive).
  expect(costUsd('haiku', 1_000_000, 0)).toBe(costUsd('claude-opus-4-7', 1_000_000, 0));
});
