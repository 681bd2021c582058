/**
 * The keys `npm start` runs the service with. The master key (docs/operations.md#keys): `AMY_MASTER_KEY` or
 * `AMY_MASTER_KEY_FILE` when the environment gives one, or else a development key file under the data
 * directory, created on the first start and said so. Losing it makes the turns' histories unreadable, so it
 * lives beside the data it protects and goes with it.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createMasterKeyFile } from '../../platform/crypto/master-key';

export function developmentMasterKey(
  dataDir: string,
  say: (message: string) => void,
): { AMY_MASTER_KEY?: string; AMY_MASTER_KEY_FILE?: string } {
  if (process.env.AMY_MASTER_KEY) return { AMY_MASTER_KEY: process.env.AMY_MASTER_KEY };
  if (process.env.AMY_MASTER_KEY_FILE) return { AMY_MASTER_KEY_FILE: process.env.AMY_MASTER_KEY_FILE };
  const file = path.join(dataDir, 'master.key');
  if (!fs.existsSync(file)) {
    createMasterKeyFile(file);
    say(`created a development master key at ${file} (workflow payloads are encrypted under it; keep it with .data)`);
  }
  return { AMY_MASTER_KEY_FILE: file };
}

/** For a run that makes its own databases and drops them (benchmarks, the eval): a key that lives as long. */
export function useEphemeralMasterKey(): void {
  process.env.AMY_MASTER_KEY ??= randomBytes(32).toString('base64');
}

/**
 * The codec server's operator for `npm start` (docs/operations.md#the-codec-server): `AMY_CODEC_OPERATORS` when
 * the environment gives it, or else `local-engineer` with a token kept in `.data/codec-operator.token`.
 */
export function developmentCodecOperator(dataDir: string): {
  env: { AMY_CODEC_OPERATORS: string };
  tokenSource: string;
} {
  if (process.env.AMY_CODEC_OPERATORS) {
    return {
      env: { AMY_CODEC_OPERATORS: process.env.AMY_CODEC_OPERATORS },
      tokenSource: 'your AMY_CODEC_OPERATORS token',
    };
  }
  const file = path.join(dataDir, 'codec-operator.token');
  if (!fs.existsSync(file)) fs.writeFileSync(file, `${randomBytes(24).toString('hex')}\n`, { mode: 0o600 });
  const token = fs.readFileSync(file, 'utf8').trim();
  return {
    env: { AMY_CODEC_OPERATORS: `local-engineer:${token}` },
    tokenSource: `the token in ${path.relative(process.cwd(), file)}`,
  };
}
