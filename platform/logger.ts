/**
 * The one log format of every role (the API, the worker, the scripted model, `npm start`'s launcher):
 * one JSON object per line, or, when stdout is a terminal, one readable line per entry
 * (`14:41:08.743 INFO  api  api listening url=http://127.0.0.1:3000`). Every entry has `at`, `level`,
 * `service` and `msg`; warnings and errors go to stderr, the rest to stdout.
 *
 * Every line is cleaned here, whatever the call site passed:
 * - an API key (`?api_key=` in a logged URL, its name percent-encoded or not, a `Bearer` credential,
 *   an `amy_live_…` key anywhere in a message or a stack) never reaches a log, so no call site can
 *   forget to strip one; a `path` field loses its query string;
 * - a field named for what carries a user's health data (a message, an answer, memory text, a data
 *   value…) is withheld whole: logs say which turn and step, never what the user said or has.
 */
import type { LogLevel as TemporalLogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type Level = (typeof LEVELS)[number];
export type LogFormat = 'json' | 'pretty';

const REDACTED = '[redacted]';
const WITHHELD = '[withheld]';
/** Fields whose whole value is a credential. */
const SECRET_FIELD = /^(authorization|api_?key|x-api-key)$/i;
/** Fields whose value is, or may hold, health data: what the user said or has, what a model answered. */
const HEALTH_DATA_FIELD =
  /^(answer|answers|content|text|message|messages|prompt|question|reply|memory|memories|memory_text|data|value|values|rows)$/i;
/**
 * A word of letters, `_` and `=` as a URL may spell it: each character as itself or percent-encoded, any number of times over
 * (`_`, `%5F`, `%255F` inside a URL that is itself a parameter's value). Servers decode a parameter's
 * name before reading it, so `?%61pi%5Fkey=` carries a key just as `?api_key=` does.
 */
const percentEncodable = (word: string) =>
  [...word].map((c) => `(?:${c}|%(?:25)*${c.charCodeAt(0).toString(16)})`).join('');
const SECRETS_IN_TEXT: Array<[RegExp, string]> = [
  // A query parameter, its name and `=` plain or percent-encoded (`api_key%3D…` inside an encoded URL).
  [new RegExp(`(${percentEncodable('api_key')}${percentEncodable('=')})[^&#\\s"'<>]*`, 'gi'), `$1${REDACTED}`],
  [/(Bearer\s+)[^\s"',]+/gi, `$1${REDACTED}`],
  // Our keys' shape, wherever else one turns up; the 3-character display prefix stays readable.
  [/(amy_live_)[0-9A-Za-z]{4,}/g, `$1${REDACTED}`],
];

export function redactSecrets(text: string): string {
  return SECRETS_IN_TEXT.reduce((redacted, [pattern, replacement]) => redacted.replace(pattern, replacement), text);
}

function cleaningReplacer(key: string, value: unknown): unknown {
  if (HEALTH_DATA_FIELD.test(key) && value !== undefined && value !== null) return WITHHELD;
  // JSON.stringify would write an Error as `{}`.
  if (value instanceof Error) return redactSecrets(value.stack ?? `${value.name}: ${value.message}`);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'string') return value;
  if (SECRET_FIELD.test(key)) return REDACTED;
  // A request's path is logged without its query string, which may carry a key or anything else.
  return redactSecrets(key === 'path' ? value.replace(/[?#].*$/s, '') : value);
}

/** A log entry as it is written: the fixed fields first, then the call site's. */
export interface LogEntry {
  at: string;
  level: Level;
  service: string;
  msg: string;
  [field: string]: unknown;
}

/** The entry as one line (no trailing newline), cleaned of credentials and health data. */
function formatLogEntry(entry: LogEntry, format: LogFormat): string {
  const json = JSON.stringify(entry, cleaningReplacer);
  if (format === 'json') return json;
  const { at, level, service, msg, ...rest } = JSON.parse(json) as LogEntry;
  const time = typeof at === 'string' && at.length >= 23 ? at.slice(11, 23) : String(at);
  const extra = Object.entries(rest).map(([key, value]) => `${key}=${prettyValue(value)}`);
  return [time, String(level).toUpperCase().padEnd(5), String(service).padEnd(6), oneLine(String(msg)), ...extra].join(
    ' ',
  );
}

/** Quoted when it would not read as one token; never spans lines. */
function prettyValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

function oneLine(text: string): string {
  return text.includes('\n') || text.includes('\r') ? JSON.stringify(text) : text;
}

/** Where the lines go; stdout and stderr by default (a test passes its own). */
export interface LogStreams {
  out: { write(line: string): unknown; isTTY?: boolean };
  err: { write(line: string): unknown };
}

const defaultStreams = (): LogStreams => ({ out: process.stdout, err: process.stderr });

/** Readable lines on a terminal, JSON lines everywhere else (a pipe, a file, a log collector). */
function defaultLogFormat(streams: LogStreams = defaultStreams()): LogFormat {
  return streams.out.isTTY ? 'pretty' : 'json';
}

function writeEntry(entry: LogEntry, format: LogFormat, streams: LogStreams) {
  const line = formatLogEntry(entry, format);
  (entry.level === 'error' || entry.level === 'warn' ? streams.err : streams.out).write(line + '\n');
}

export function createLogger(
  service: string,
  minLevel: Level = 'info',
  streams: LogStreams = defaultStreams(),
  format: LogFormat = defaultLogFormat(streams),
): Logger {
  const min = LEVELS.indexOf(minLevel);
  const write =
    (level: Level) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      if (LEVELS.indexOf(level) < min) return;
      writeEntry({ at: new Date().toISOString(), level, service, msg, ...fields }, format, streams);
    };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

/**
 * Writes a child process's output line in this process's format, as `npm start` relays its roles: a
 * line that is one of our entries keeps its fields; any other line (a crash's stack, a library writing
 * to the console) becomes an entry of `service`, an error when it came on stderr.
 */
export function createLogRelay(streams: LogStreams = defaultStreams(), format: LogFormat = defaultLogFormat(streams)) {
  return (service: string, line: string, from: 'stdout' | 'stderr') => {
    if (line.trim() === '') return;
    const parsed = parseEntry(line);
    const entry: LogEntry = parsed ?? {
      at: new Date().toISOString(),
      level: from === 'stderr' ? 'error' : 'info',
      service,
      msg: line,
    };
    writeEntry(entry, format, streams);
  };
}

function parseEntry(line: string): LogEntry | null {
  if (!line.startsWith('{')) return null;
  try {
    const value = JSON.parse(line) as Partial<LogEntry> | null;
    if (!value || typeof value !== 'object' || typeof value.msg !== 'string') return null;
    if (!LEVELS.includes(value.level as Level) || typeof value.service !== 'string') return null;
    return value as LogEntry;
  } catch {
    return null;
  }
}

const FROM_TEMPORAL: Record<TemporalLogLevel, Level> = {
  TRACE: 'debug',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** Temporal's metadata that is noise in a line of ours: Core's tracing spans, an activity's opaque task token. */
const DROPPED_TEMPORAL_META = new Set(['spanContexts', 'taskToken']);

/**
 * Temporal's Logger on top of ours, for `Runtime.install({ logger })`: the SDK's lines, the Workflow
 * and Activity context loggers' and (with `telemetryOptions.logging.forward`) Core's come out as ours.
 */
export function temporalLogger(logger: Logger): TemporalLogger {
  const log = (level: TemporalLogLevel, message: string, meta: LogMetadata = {}) => {
    const fields: Record<string, unknown> = {};
    // Symbol keys (the SDK's timestamp) are left out; the entry has its own `at`.
    for (const [key, value] of Object.entries(meta)) if (!DROPPED_TEMPORAL_META.has(key)) fields[key] = value;
    logger[FROM_TEMPORAL[level] ?? 'info'](message, fields);
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}
