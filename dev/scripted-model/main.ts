/** `npm run scripted-model`: the scripted Messages API on its own, for `npm start`, demos and manual runs. */
import { z } from 'zod';
import { createLogger } from '../../platform/logger';
import { realisticPacing } from './pacing';
import { scriptedRules } from './rules';
import { startScriptedModelServer } from './server';

const envSchema = z.object({
  SCRIPTED_MODEL_PORT: z.coerce.number().int().min(0).max(65535).default(4100),
  SCRIPTED_MODEL_HOST: z.string().min(1).default('127.0.0.1'),
  /** Pause before each streamed delta, to make streaming visible in a demo. */
  SCRIPTED_MODEL_CHUNK_DELAY_MS: z.coerce.number().int().min(0).default(0),
  /**
   * `realistic`: answer as slowly as Claude does (time to first token, output speed, each call's usual
   * output length; ./pacing.ts), so a turn lasts as long as with a real model. `none`: at once.
   */
  SCRIPTED_MODEL_PACE: z.enum(['none', 'realistic']).default('none'),
  /** With `realistic` pacing: one time to first token and one output speed for every model, instead of each family's. */
  SCRIPTED_MODEL_TTFT_MS: z.coerce.number().min(0).optional(),
  SCRIPTED_MODEL_TOKENS_PER_S: z.coerce.number().positive().optional(),
  /** With `realistic` pacing: output tokens per streamed delta (4), and a factor on every call's output length (1). */
  SCRIPTED_MODEL_TOKENS_PER_DELTA: z.coerce.number().positive().optional(),
  SCRIPTED_MODEL_OUTPUT_SCALE: z.coerce.number().positive().optional(),
  /** `first`: the Data Science code step writes failing code once (exercises the debug loop); `always`: never fixes it. */
  SCRIPTED_MODEL_BROKEN_CODE: z.enum(['never', 'first', 'always']).default('never'),
  /**
   * `number`: the code step's result is off (every float × 1.25 + 1, as if the code were talked into a
   * number); `window`: it averages another window than planned. Reproduction must catch both.
   */
  SCRIPTED_MODEL_WRONG_RESULT: z.enum(['none', 'number', 'window']).default('none'),
  /**
   * `first`: synthesis states a number that traces to nothing, and leaves it out when told to write the
   * answer again (the fact-check's repair); `always`: states it again (the check removes the sentence).
   */
  SCRIPTED_MODEL_UNTRACED_NUMBER: z.enum(['never', 'first', 'always']).default('never'),
});

const logger = createLogger('scripted-model');

async function run() {
  const env = envSchema.parse(process.env);
  const server = await startScriptedModelServer({
    port: env.SCRIPTED_MODEL_PORT,
    host: env.SCRIPTED_MODEL_HOST,
    streamChunkDelayMs: env.SCRIPTED_MODEL_CHUNK_DELAY_MS,
    ...(env.SCRIPTED_MODEL_PACE === 'realistic'
      ? {
          pacing: realisticPacing({
            firstTokenMs: env.SCRIPTED_MODEL_TTFT_MS,
            tokensPerSecond: env.SCRIPTED_MODEL_TOKENS_PER_S,
            tokensPerDelta: env.SCRIPTED_MODEL_TOKENS_PER_DELTA,
            outputScale: env.SCRIPTED_MODEL_OUTPUT_SCALE,
          }),
        }
      : {}),
    rules: scriptedRules({
      brokenCode: env.SCRIPTED_MODEL_BROKEN_CODE,
      wrongResult: env.SCRIPTED_MODEL_WRONG_RESULT,
      untracedNumber: env.SCRIPTED_MODEL_UNTRACED_NUMBER,
    }),
  });
  logger.info('scripted model listening', { url: server.url, hint: `set ANTHROPIC_BASE_URL=${server.url}` });
  const shutdown = () => {
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error('scripted model failed to close', { error: err });
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

run().catch((err: unknown) => {
  logger.error('scripted model failed', { error: err });
  process.exit(1);
});
