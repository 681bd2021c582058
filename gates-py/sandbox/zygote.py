"""The fork server ("zygote"): one per worker, started by platform/sandbox/fork-server.ts under bwrap.

    zygote.py --slots N --scratch-bytes N

It imports pandas, numpy and the runner's modules once, then forks one child per job. What it saves
is the interpreter's start-up and the pandas import (about 0.3 s of wall clock and 0.5 s of CPU per
run); what it must not lose is anything runner.py's own process gave a run. So each child, before
any generated code runs, makes itself what a cold run's process is:

* its own identity for good: setgroups([]), setresgid and setresuid to the run's leased host uid
  (uids.ts), which clears every capability the zygote kept; the bounding set emptied first, then
  no_new_privs, not dumpable (no ptrace, no core), and SIGKILL when the zygote dies;
* its own mount namespace: a private size-capped tmpfs at /tmp owned by that uid (mode 0700), its own
  run's input directory bound read-only at /input, and the directory of every run's inputs (/runs)
  unmounted, so neither another run's scratch nor its data exists for it; and its own IPC, network
  and UTS namespaces, so no System V segment, abstract socket or hostname is shared with another run
  (the pid namespace is the zygote's: without /proc, with its own uid and seccomp's self-only signals,
  a sibling is nothing it can reach);
* only its own slot's pipes as stdout and stderr, /dev/null as stdin, and no other descriptor (not
  the zygote's control pipes, not another slot's output, not a sibling's pidfd);
* then runner.execute: the rlimits (CPU counted from the fork, memory, tasks counted for its own uid,
  file size) and the seccomp filter (no exec, no fork, no sockets, signals to itself only), and one
  analysis. The child exits when it is done: one run per process, and nothing of it reaches the
  zygote or a later child.

The zygote itself runs as uid 0 with CAP_SYS_ADMIN, CAP_CHOWN, CAP_SETPCAP, CAP_SETGID, CAP_SETUID and
CAP_KILL only, what the children's steps above take (platform/sandbox/bwrap.ts, FORK_SERVER_CAPABILITIES,
says which step needs which): bwrap drops every other, and the zygote narrows its bounding set to these
and empties its inheritable and ambient sets when it starts, so that no exec could give it more.

The zygote never reads a run's data or output: the data is in the run's input directory, which only
the child opens, and the output goes down the slot's pipes straight to the worker. The zygote's
memory, which every child inherits, holds nothing of any user.

Control (stdin, one JSON object per line, from the worker):
    {"op": "run", "job": 7, "slot": 0, "uid": 1879048192, "dir": "amy-sandbox-…" | null, "argv": [...]}
    {"op": "kill", "job": 7}
Reports (stdout, one JSON object per line):
    {"ready": true}
    {"job": 7, "pid": 123}
    {"job": 7, "code": 0 | null, "signal": "SIGSYS" | null, "marker": "…"}
After a child has exited, the zygote writes the job's marker (random, made after the child was gone,
so no run can forge it) on the slot's stdout and stderr: the end of that run's output on a pipe the
slot's next run uses too. The zygote exits when its stdin closes (the worker is gone); bwrap's
--die-with-parent and the pid namespace then take every child with it.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import selectors
import signal
import sys
import traceback

import confine
import runner

# Everything a run imports, once, here: this is what the children inherit instead of paying for.
import analysis_code  # noqa: F401
import frames  # noqa: F401  (numpy, pandas)
import jsonsafe  # noqa: F401
import preflight  # noqa: F401

# What generated analyses commonly import themselves (correlations, tests): about 0.4 s a run otherwise.
import scipy.stats  # noqa: F401

RUNS_DIR = '/runs'
INPUT_DIR = '/input'
SCRATCH_DIR = '/tmp'
RUN_DIR_NAME = re.compile(r'^amy-sandbox-[A-Za-z0-9_-]+$')

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_MOVE = 0x2000
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_READ = 23
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
# A child that failed to confine itself exits with this, before any generated code ran.
SETUP_FAILED = 70

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


def _check(rc: int, what: str) -> None:
    if rc != 0:
        code = ctypes.get_errno()
        raise OSError(code, f'{what}: {os.strerror(code)}')


def _prctl(option: int, arg: int = 0) -> int:
    return _libc.prctl(option, arg, 0, 0, 0)


def _private_namespaces(run_dir: str | None, uid: int, scratch_bytes: int) -> None:
    """The child's own namespaces, as a cold run has them: mounts (its scratch, its input, no one
    else's), IPC (a System V segment or queue would outlive the run in the zygote's), network (an
    abstract unix socket is per network namespace: no channel to a sibling) and UTS."""
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUTS), 'unshare')
    # Nothing mounted here propagates back to the zygote's namespace (or to a sibling's).
    _check(_libc.mount(b'none', b'/', None, MS_REC | MS_PRIVATE, None), 'make / private')
    _private_scratch(uid, scratch_bytes)
    if run_dir is not None:
        source = os.path.join(RUNS_DIR, run_dir, 'input').encode()
        _check(_libc.mount(source, INPUT_DIR.encode(), None, MS_BIND, None), 'bind the input')
        flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
        _check(_libc.mount(None, INPUT_DIR.encode(), None, flags, None), 'input read-only')
    _check(_libc.umount2(RUNS_DIR.encode(), MNT_DETACH), 'unmount the runs')


def _python_under_scratch() -> list[str]:
    """The interpreter's directories (bwrap.ts pythonLayout's prefixes) that lie under /tmp, as a checkout
    in the temporary directory has them: bwrap bound them there, and a fresh /tmp would hide them."""
    base = os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))
    prefixes = {sys.prefix, sys.base_prefix, base}
    return sorted(p for p in prefixes if p.startswith(SCRATCH_DIR + '/'))


def _private_scratch(uid: int, scratch_bytes: int) -> None:
    """A fresh size-capped tmpfs at /tmp, the run's own (mode 0700), with the interpreter's directories that
    lie under /tmp bound read-only in it again, on root-owned directories, as bwrap makes them for a cold
    run: a module imported lazily (scipy.signal, say) must still be found, and the run may not write beside
    them. The tmpfs is assembled on /input, empty until the input is bound there, and then moved onto /tmp,
    since mounting it on /tmp first would hide the directories to bind."""
    staging = INPUT_DIR
    options = f'size={scratch_bytes},mode=0755,uid=0,gid=0'.encode()
    _check(_libc.mount(b'tmpfs', staging.encode(), b'tmpfs', MS_NOSUID | MS_NODEV, options), 'scratch tmpfs')
    for prefix in _python_under_scratch():
        target = os.path.join(staging, os.path.relpath(prefix, SCRATCH_DIR))
        os.makedirs(target, mode=0o755, exist_ok=True)
        _check(_libc.mount(prefix.encode(), target.encode(), None, MS_BIND | MS_REC, None), 'bind python')
        flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV
        _check(_libc.mount(None, target.encode(), None, flags, None), 'python read-only')
    # Then the scratch becomes the run's (CAP_CHOWN, dropped with the rest at the uid switch); its mode first,
    # while root still owns it: changing the mode of another uid's file would take CAP_FOWNER.
    os.chmod(staging, 0o700)
    os.chown(staging, uid, uid)
    _check(_libc.mount(staging.encode(), SCRATCH_DIR.encode(), None, MS_MOVE, None), 'move the scratch to /tmp')


class _CapHeader(ctypes.Structure):
    _fields_ = [('version', ctypes.c_uint32), ('pid', ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [('effective', ctypes.c_uint32), ('permitted', ctypes.c_uint32), ('inheritable', ctypes.c_uint32)]


_LINUX_CAPABILITY_VERSION_3 = 0x20080522


def _hold_only_own_capabilities() -> None:
    """The zygote's bounding set narrowed to what bwrap left it (bwrap.ts FORK_SERVER_CAPABILITIES), and
    its inheritable and ambient sets emptied. bwrap, run by root, leaves the bounding set whole, and uid 0
    regains every capability of the bounding set at an exec; the ambient set would hand its capabilities
    to any program it executed. The zygote executes nothing, and now it could gain nothing by it."""
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capget(ctypes.byref(header), data), 'read the capabilities')
    permitted = data[0].permitted | (data[1].permitted << 32)
    for cap in range(64):
        if _prctl(PR_CAPBSET_READ, cap) < 0:  # past the kernel's last capability
            break
        if not (permitted >> cap) & 1:
            _check(_prctl(PR_CAPBSET_DROP, cap), 'narrow the bounding set')
    _check(_prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL), 'clear the ambient set')
    for half in data:
        half.inheritable = 0
    _check(_libc.capset(ctypes.byref(header), data), 'clear the inheritable set')


def _clear_capabilities() -> None:
    """Every capability set of this process emptied (capset; lowering needs no privilege)."""
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), 'clear the capabilities')


def _drop_identity(uid: int, zygote_pid: int) -> None:
    """The run's uid for good, with no capability left, and nothing to come back with."""
    for cap in range(64):
        if _prctl(PR_CAPBSET_READ, cap) < 0:  # past the kernel's last capability
            break
        _check(_prctl(PR_CAPBSET_DROP, cap), 'drop the bounding set')
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    # The switch emptied the permitted and effective sets; the inheritable one it leaves as it was.
    _clear_capabilities()
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid) or os.getgroups():
        raise OSError(errno.EPERM, 'the uid switch did not hold')
    _check(_prctl(PR_SET_NO_NEW_PRIVS, 1), 'no_new_privs')
    # A change of credentials resets both of these, so they come after it.
    _check(_prctl(PR_SET_DUMPABLE, 0), 'not dumpable')
    _check(_prctl(PR_SET_PDEATHSIG, signal.SIGKILL), 'parent-death signal')
    if os.getppid() != zygote_pid:  # the zygote died before the signal was armed
        os._exit(SETUP_FAILED)


def _child(job: dict, out_fd: int, err_fd: int, zygote_pid: int, scratch_bytes: int) -> None:
    """In the forked child: confine, run the one job, exit. Never returns."""
    status = SETUP_FAILED
    try:
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        null = os.open('/dev/null', os.O_RDONLY)
        os.dup2(null, 0)
        os.closerange(3, os.sysconf('SC_OPEN_MAX'))
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
            signal.signal(number, signal.SIG_DFL)
        _private_namespaces(job['dir'], job['uid'], scratch_bytes)
        _drop_identity(job['uid'], zygote_pid)
        os.chdir(SCRATCH_DIR)
        args = runner.parse(job['argv'])
    except BaseException:  # confinement failed: report on the slot's stderr, run nothing
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(SETUP_FAILED)
    try:
        status = runner.execute(args)
        sys.stdout.flush()
    except BaseException:
        traceback.print_exc()
        status = 1
    finally:
        try:
            sys.stderr.flush()
        finally:
            os._exit(status)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f'SIG{number}'


class Zygote:
    def __init__(self, slots: int, scratch_bytes: int) -> None:
        # Slot k's stdout and stderr are descriptors 3 + 2k and 4 + 2k, inherited from the worker.
        self.slots = [(3 + 2 * k, 4 + 2 * k) for k in range(slots)]
        self.scratch_bytes = scratch_bytes
        self.pid = os.getpid()
        self.selector = selectors.DefaultSelector()
        self.jobs: dict[int, tuple[int, int, int]] = {}  # job: (pid, pidfd, slot)
        self.pending = b''

    def report(self, message: dict) -> None:
        data = (json.dumps(message, separators=(',', ':')) + '\n').encode()
        while data:
            data = data[os.write(1, data) :]

    def start(self, job: dict) -> None:
        number, slot = int(job['job']), int(job['slot'])
        run_dir = job.get('dir')
        if run_dir is not None and not RUN_DIR_NAME.match(run_dir):
            raise ValueError('not a run directory name')
        out_fd, err_fd = self.slots[slot]
        pid = os.fork()
        if pid == 0:
            _child(job, out_fd, err_fd, self.pid, self.scratch_bytes)
        pidfd = os.pidfd_open(pid)
        self.jobs[number] = (pid, pidfd, slot)
        self.selector.register(pidfd, selectors.EVENT_READ, ('exit', number))
        self.report({'job': number, 'pid': pid})

    def kill(self, number: int) -> None:
        entry = self.jobs.get(number)
        if entry is not None:
            try:
                signal.pidfd_send_signal(entry[1], signal.SIGKILL)
            except ProcessLookupError:
                pass  # exited already: its exit is on its way

    def reap(self, number: int) -> None:
        pid, pidfd, slot = self.jobs.pop(number)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        # Made now, after the child is gone, so that no run could have known it.
        marker = f'\n@@amy-sandbox-end-{os.urandom(16).hex()}@@\n'.encode()
        for fd in self.slots[slot]:
            data = marker
            while data:
                data = data[os.write(fd, data) :]
        self.report(
            {
                'job': number,
                'code': code if code >= 0 else None,
                'signal': _signal_name(-code) if code < 0 else None,
                'marker': marker.decode(),
            }
        )

    def control(self) -> bool:
        chunk = os.read(0, 65536)
        if not chunk:
            return False
        self.pending += chunk
        *lines, self.pending = self.pending.split(b'\n')
        for line in lines:
            if not line.strip():
                continue
            message = json.loads(line)
            if message['op'] == 'run':
                self.start(message)
            elif message['op'] == 'kill':
                self.kill(int(message['job']))
        return True

    def serve(self) -> None:
        self.selector.register(0, selectors.EVENT_READ, ('control', None))
        self.report({'ready': True})
        while True:
            for key, _ in self.selector.select():
                kind, number = key.data
                if kind == 'control':
                    if not self.control():
                        return
                else:
                    self.reap(number)


def _warm_up() -> None:
    """Runs the run path once on made-up rows, so that pandas' lazily loaded parts (date parsing, rolling
    windows, the JSON encoding of frames) are loaded here once rather than in every child. The rows are
    constants of this file: nothing of any user is in the zygote."""
    days = [
        {'date': f'2020-01-{day:02d}', **{metric: float(day) for metric in frames.DAILY_METRICS}}
        for day in range(1, 29)
    ]
    files = {
        'summary.json': json.dumps(days),
        'activities.json': json.dumps([{'date': '2020-01-02', 'type': 'run', 'duration_minutes': 30}]),
        'labs.json': json.dumps([{'taken_on': '2020-01-03', 'name': 'ldl', 'value': 1.0, 'unit': 'mmol/L'}]),
        'profile.json': json.dumps({'sex': 'female', 'birth_year': 1980, 'height_cm': 170, 'weight_kg': 60}),
    }
    loaded = frames.frames_from(files.get)
    summary = loaded['summary_df']
    result = {'mean': summary['steps'].mean(), 'by_day': summary.groupby(summary['date'].dt.day_name())['steps'].mean()}
    jsonsafe.encode_result(result, 1024 * 1024)
    jsonsafe.encode_result(summary.tail(3), 1024 * 1024)
    analysis_code.analysis_source('return 1')


def main(argv: list[str]) -> int:
    slots = int(argv[argv.index('--slots') + 1])
    scratch_bytes = int(argv[argv.index('--scratch-bytes') + 1])
    _hold_only_own_capabilities()
    # libseccomp is loaded once here rather than in each child, under its rlimits.
    confine.load_libseccomp()
    _warm_up()
    # A fork copies only the forking thread, so the zygote starts none (and OpenBLAS is told to make none:
    # OPENBLAS_NUM_THREADS=1 in the sandbox's environment).
    Zygote(slots, scratch_bytes).serve()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
