/**
 * Structured one-line JSON logs on stdout/stderr. Every line is redacted here, whatever the call site
 * passed: an API key (`?api_key=` in a logged URL, a `Bearer` credential, an `amy_live_…` key anywhere
 * in a message or a stack) never reaches a log, so no call site can forget to strip one.
 */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];

const REDACTED = '[redacted]';
/** Fields whose whole value is a credential. */
const SECRET_FIELD = /^(authorization|api_?key|x-api-key)$/i;
const SECRETS_IN_TEXT: Array<[RegExp, string]> = [
  // A query parameter, plain or percent-encoded (`api_key%3D…` inside an encoded URL).
  [/(api_key(?:=|%3D))[^&#\s"'<>]*/gi, `$1${REDACTED}`],
  [/(Bearer\s+)[^\s"',]+/gi, `$1${REDACTED}`],
  // Our keys' shape, wherever else one turns up; the 3-character display prefix stays readable.
  [/(amy_live_)[0-9A-Za-z]{4,}/g, `$1${REDACTED}`],
];

export function redactSecrets(text: string): string {
  return SECRETS_IN_TEXT.reduce((redacted, [pattern, replacement]) => redacted.replace(pattern, replacement), text);
}

function redactingReplacer(key: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return SECRET_FIELD.test(key) ? REDACTED : redactSecrets(value);
}

/** Where the lines go; stdout and stderr by default (a test passes its own). */
export interface LogStreams {
  out: { write(line: string): unknown };
  err: { write(line: string): unknown };
}

export function createLogger(
  service: string,
  minLevel: Level = 'info',
  streams: LogStreams = { out: process.stdout, err: process.stderr },
): Logger {
  const min = LEVELS.indexOf(minLevel);
  const write =
    (level: Level) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      if (LEVELS.indexOf(level) < min) return;
      const line = JSON.stringify({ at: new Date().toISOString(), level, service, msg, ...fields }, redactingReplacer);
      (level === 'error' || level === 'warn' ? streams.err : streams.out).write(line + '\n');
    };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
