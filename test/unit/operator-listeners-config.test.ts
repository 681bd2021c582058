/**
 * The operators' listeners in the configuration (platform/config.ts): the metrics and the codec server listen on
 * loopback unless told otherwise, never on the public API's HOST; the codec server's operators and its port come
 * together or not at all, so that it can no longer be half-configured onto the public port.
 */
import { codecServerConfig, ConfigError, loadConfig } from '../../platform/config';

const BASE = { DATABASE_URL: 'postgresql://amy@127.0.0.1:5432/amy' };
const OPERATORS = `ops:${'t'.repeat(32)}`;

test('with the public API on every interface, the metrics and the codec listeners stay on loopback', () => {
  const config = loadConfig({ ...BASE, HOST: '0.0.0.0', AMY_METRICS_PORT: '9464' });
  expect(config.AMY_METRICS_HOST).toBe('127.0.0.1');
  expect(config.AMY_CODEC_HOST).toBe('127.0.0.1');
  expect(loadConfig({ ...BASE, AMY_METRICS_HOST: '0.0.0.0' }).AMY_METRICS_HOST).toBe('0.0.0.0');
});

test('the API’s codec server takes its operators and its port together, or neither; the worker does not care', () => {
  const codecOf = (env: Record<string, string>) => codecServerConfig(loadConfig({ ...BASE, ...env }));
  expect(() => codecOf({ AMY_CODEC_OPERATORS: OPERATORS })).toThrow(ConfigError);
  expect(() => codecOf({ AMY_CODEC_OPERATORS: OPERATORS })).toThrow(/AMY_CODEC_PORT.*together/);
  expect(() => codecOf({ AMY_CODEC_PORT: '8234' })).toThrow(/AMY_CODEC_OPERATORS and AMY_CODEC_PORT/);
  expect(codecOf({ AMY_CODEC_OPERATORS: OPERATORS, AMY_CODEC_PORT: '8234' })).toEqual({
    operators: OPERATORS,
    port: 8234,
  });
  expect(codecOf({})).toBeNull();
  // The configuration itself, which the worker loads too, takes either alone.
  expect(loadConfig({ ...BASE, AMY_CODEC_OPERATORS: OPERATORS }).AMY_CODEC_AUDIT_RETENTION_DAYS).toBe(365);
});

test('the codec server’s public URL is an http or https URL', () => {
  const codec = { ...BASE, AMY_CODEC_OPERATORS: OPERATORS, AMY_CODEC_PORT: '8234' };
  expect(loadConfig({ ...codec, AMY_CODEC_PUBLIC_URL: 'https://codec.ops.example/codec' }).AMY_CODEC_PUBLIC_URL).toBe(
    'https://codec.ops.example/codec',
  );
  expect(() => loadConfig({ ...codec, AMY_CODEC_PUBLIC_URL: 'ftp://codec.ops.example/codec' })).toThrow(
    /AMY_CODEC_PUBLIC_URL/,
  );
});
