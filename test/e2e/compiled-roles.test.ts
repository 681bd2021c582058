/**
 * The service the end-to-end tier runs is the compiled build, started as production starts it: the
 * process answering at the suites' API URL, and every process polling their task queue, run
 * `dist/<role>/main.js` with plain node, with no tsx loaded (neither on the command line nor through
 * NODE_OPTIONS). The processes are found from the outside, not from the harness's own bookkeeping: the API
 * as the owner of the socket listening on its port, the worker as the pollers Temporal reports
 * (`<pid>@<host>`, the SDK's default identity). A turn then runs through them to the end.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { turnSchema } from '../../contracts/turn';
import { api, expectSchema, thanks } from '../support/http';
import { startTestService, type TestService } from '../support/service';

const repoRoot = path.resolve(__dirname, '..', '..');

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
});

/** The inodes of the sockets listening on `port` (IPv4 and IPv6), from /proc/net/tcp{,6}. */
function listeningSocketInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!fs.existsSync(table)) continue;
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const localPort = parseInt(fields[1].split(':')[1], 16);
      const listening = fields[3] === '0A';
      if (listening && localPort === port) inodes.add(fields[9]);
    }
  }
  return inodes;
}

/** The process holding a socket with one of `inodes` open. */
function socketOwner(inodes: Set<string>): number {
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // exited meanwhile, or not ours to read
    }
    for (const fd of fds) {
      const target = (() => {
        try {
          return fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
        } catch {
          return '';
        }
      })();
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) return Number(pid);
    }
  }
  throw new Error(`no process holds a socket with inode ${[...inodes].join(', ')}`);
}

/** How a process was started: its command line and the NODE_OPTIONS of its environment. */
function startedAs(pid: number): { argv: string[]; nodeOptions: string } {
  const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  const nodeOptions = environ.find((entry) => entry.startsWith('NODE_OPTIONS='))?.slice('NODE_OPTIONS='.length) ?? '';
  return { argv, nodeOptions };
}

function expectCompiledNode(pid: number, script: string) {
  const { argv, nodeOptions } = startedAs(pid);
  expect(argv).toEqual([process.execPath, path.join(repoRoot, script)]);
  expect(argv.join(' ')).not.toMatch(/tsx/);
  expect(nodeOptions).not.toMatch(/tsx/);
}

test('the API answering the suites is `node dist/api/main.js`, without tsx', async () => {
  const port = Number(new URL(svc.url).port);
  const pid = socketOwner(listeningSocketInodes(port));
  expect(pid).not.toBe(process.pid);
  expectCompiledNode(pid, 'dist/api/main.js');
});

test('the worker polling the suites’ task queue is `node dist/worker/main.js`, without tsx', async () => {
  const described = await svc.temporal.workflowService.describeTaskQueue({
    namespace: svc.config.TEMPORAL_NAMESPACE,
    taskQueue: { name: svc.config.TEMPORAL_TASK_QUEUE },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  const pollers = described.pollers ?? [];
  expect(pollers.length).toBeGreaterThan(0);
  for (const poller of pollers) {
    const [pid, host] = (poller.identity ?? '').split('@');
    expect(host).toBe(os.hostname());
    expect(Number(pid)).not.toBe(process.pid);
    expectCompiledNode(Number(pid), 'dist/worker/main.js');
  }
});

test('a turn runs through the compiled roles to the end', async () => {
  const user = await svc.createUser();
  const res = await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: { ...thanks, stream: false } });
  expect(res.status).toBe(200);
  const turn = expectSchema(turnSchema, res.body);
  expect(turn.status).toBe('completed');
  expect(turn.result?.answer.length).toBeGreaterThan(0);
});
