/**
 * Postgres and Temporal for `npm start`, the services test tier and the benchmarks. Each is started
 * here unless the environment points at one to use instead: DATABASE_URL for Postgres, TEMPORAL_ADDRESS
 * (with TEMPORAL_UI_URL for its Web UI, if any) for Temporal. `stop()` stops only what was started here.
 * The two start side by side: neither needs the other, and each takes seconds.
 */
import path from 'node:path';
import { startLocalPostgres, throwawayClusterDir, type LocalPostgres } from './local-postgres';
import { startLocalTemporal, type LocalTemporal } from './local-temporal';
import { preferPort } from './ports';

export interface LocalServices {
  databaseUrl: string;
  temporalAddress: string;
  /** The dev server's Web UI, TEMPORAL_UI_URL beside a TEMPORAL_ADDRESS, or null (headless, or not known). */
  temporalUiUrl: string | null;
  stop(): Promise<void>;
}

export interface LocalServicesOptions {
  postgres?: {
    /** A cluster kept here across runs; by default a throwaway one in a temp directory that `stop()` deletes. */
    dataDir?: string;
    /** The throwaway cluster's temp directory name starts with this. */
    tempDirPrefix?: string;
    /** Used when free; any free port otherwise. */
    preferredPort?: number;
    /** Created if missing; `amy` by default. */
    database?: string;
    /** Server settings (`-c name=value`), e.g. `track_commit_timestamp: 'on'`. */
    settings?: Record<string, string>;
  };
  temporal?: {
    /** SQLite file kept across runs; in memory by default. */
    dbFile?: string;
    preferredPort?: number;
    preferredUiPort?: number;
    headless?: boolean;
    logFile?: string;
    /** How long the default namespace keeps closed workflows' histories (e.g. `168h`); the server's default otherwise. */
    historyRetention?: string;
    /** The codec server the Web UI decodes payloads with (`--ui-codec-endpoint`). */
    uiCodecEndpoint?: string;
    /** Server settings (`--dynamic-config-value`). */
    dynamicConfig?: Record<string, unknown>;
  };
  /** Where DATABASE_URL, TEMPORAL_ADDRESS and TEMPORAL_UI_URL are read; this process's environment by default. */
  env?: NodeJS.ProcessEnv;
  /** Says what is being started, e.g. `starting Postgres under .data/postgres`. */
  log?: (message: string) => void;
}

const shown = (file: string) => path.relative(process.cwd(), file) || '.';
const portOrAny = (preferred: number | undefined) => (preferred === undefined ? undefined : preferPort(preferred));

async function startPostgres(
  opts: NonNullable<LocalServicesOptions['postgres']>,
  log: LocalServicesOptions['log'],
): Promise<LocalPostgres> {
  const start = async (dataDir: string) =>
    startLocalPostgres({
      dataDir,
      port: await portOrAny(opts.preferredPort),
      database: opts.database,
      settings: opts.settings,
      log,
    });
  if (opts.dataDir) {
    log?.(`starting Postgres under ${shown(opts.dataDir)}`);
    return start(opts.dataDir);
  }
  const dir = throwawayClusterDir(opts.tempDirPrefix ?? 'amy-pg-');
  try {
    const pg = await start(dir.dataDir);
    return {
      ...pg,
      async stop() {
        await pg.stop();
        dir.remove();
      },
    };
  } catch (err) {
    dir.remove();
    throw err;
  }
}

async function startTemporal(
  opts: NonNullable<LocalServicesOptions['temporal']>,
  log: LocalServicesOptions['log'],
): Promise<LocalTemporal> {
  log?.(
    `starting the Temporal dev server (${opts.dbFile ? `SQLite under ${shown(path.dirname(opts.dbFile))}` : 'in memory'})`,
  );
  return startLocalTemporal({
    dbFile: opts.dbFile,
    port: await portOrAny(opts.preferredPort),
    uiPort: await portOrAny(opts.preferredUiPort),
    headless: opts.headless,
    logFile: opts.logFile,
    historyRetention: opts.historyRetention,
    uiCodecEndpoint: opts.uiCodecEndpoint,
    dynamicConfig: opts.dynamicConfig,
  });
}

export async function startLocalServices(opts: LocalServicesOptions = {}): Promise<LocalServices> {
  const env = opts.env ?? process.env;
  const [postgres, temporal] = await Promise.allSettled([
    env.DATABASE_URL ? null : startPostgres(opts.postgres ?? {}, opts.log),
    env.TEMPORAL_ADDRESS ? null : startTemporal(opts.temporal ?? {}, opts.log),
  ]);
  const stop = async () => {
    for (const started of [temporal, postgres]) {
      if (started.status === 'fulfilled' && started.value)
        await started.value.stop().catch((err) => console.error(err));
    }
  };
  if (postgres.status === 'rejected' || temporal.status === 'rejected') {
    await stop();
    throw postgres.status === 'rejected' ? postgres.reason : (temporal as PromiseRejectedResult).reason;
  }
  return {
    databaseUrl: postgres.value?.url ?? env.DATABASE_URL!,
    temporalAddress: temporal.value?.address ?? env.TEMPORAL_ADDRESS!,
    temporalUiUrl: temporal.value ? temporal.value.uiUrl : (env.TEMPORAL_UI_URL ?? null),
    stop,
  };
}
