"""Entry point inside the sandbox (started by platform/sandbox/ through bwrap).

    runner.py probe    --cpu-seconds N --memory-mb N --max-output-bytes N
    runner.py preflight CODE_FILE  (same limits)
    runner.py run INPUT_DIR        (same limits)
    runner.py serve                (same limits)

Every command applies the rlimits first and installs the seccomp filter (confine.py) before it
touches the generated code, so nothing the code does can lift them. `run` reads the data files into
DataFrames, installs the filter, then defines the generated `analysis(...)` and calls it.

`serve` is a `run` started ahead of its job (the pre-started pool, for workers that cannot use the
fork server): it applies the limits and imports pandas, then reads its one job from stdin (a JSON
object of the input files' names and contents, up to end-of-file) and runs it as `run` would. The
fork server (zygote.py) calls `execute` in each forked child instead of starting this script.

Output: anything the code prints, then one envelope, the last thing on stdout:

    \\n@@amy-sandbox-envelope@@\\n{"status": "ok", "result": ...}
    \\n@@amy-sandbox-envelope@@\\n{"status": "error", "kind", "message", "traceback", "line"}

The envelope is written even when the code fails; a run that ends without one was ended by a
signal: seccomp's SIGSYS, the CPU limit's SIGXCPU, a crash, or the caller's wall-clock kill.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import inspect
import json
import os
import sys
from pathlib import Path

import confine
from analysis_code import FILENAME, AnalysisSource, analysis_source, exception_message, user_traceback

ENVELOPE_MARKER = '\n@@amy-sandbox-envelope@@\n'
INPUT_DIR = Path('/input')
SCRATCH_DIR = Path('/tmp')
# Errors that mean "the sandbox said no" rather than "the code has a bug".
DENIED_ERRNOS = {
    errno.EACCES: 'permission denied',
    errno.EPERM: 'operation not permitted',
    errno.EROFS: 'read-only file system',
    errno.EFBIG: 'file size limit reached',
    errno.ENOSPC: 'scratch space is full',
}


class _Envelope:
    """Writes the envelope to the stdout the runner started with, whatever the code did to sys.stdout."""

    def __init__(self) -> None:
        self._fd = os.dup(1)

    def send(self, payload: dict) -> None:
        # Serialised as jsonsafe measured the result, so a result under the limit fits the caller's cap.
        text = json.dumps(payload, allow_nan=False, ensure_ascii=False, separators=(',', ':'))
        data = (ENVELOPE_MARKER + text + '\n').encode('utf-8')
        while data:
            data = data[os.write(self._fd, data) :]


def _denial(exc: BaseException) -> str | None:
    """Why the sandbox refused, if that is what the exception (or one it chains) says."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError):
            if exc.errno in DENIED_ERRNOS:
                return DENIED_ERRNOS[exc.errno]
            path = exc.filename if isinstance(exc.filename, str) else None
            if isinstance(exc, FileNotFoundError) and path and os.path.isabs(path):
                inside = any(Path(path).is_relative_to(root) for root in (INPUT_DIR, SCRATCH_DIR))
                if not inside:
                    return 'only the input data and the scratch directory /tmp exist in the sandbox'
        exc = exc.__cause__ or exc.__context__
    return None


def _error(kind: str, message: str, traceback: str | None = None, line: int | None = None) -> dict:
    payload: dict = {'status': 'error', 'kind': kind, 'message': message}
    if traceback is not None:
        payload['traceback'] = traceback
    if line is not None:
        payload['line'] = line
    return payload


def _frames_for(analysis, frames: dict) -> dict:
    """The frames `analysis` names: a whole function written to the older signature (without labs_df) still runs."""
    try:
        parameters = inspect.signature(analysis).parameters.values()
    except (TypeError, ValueError):
        return frames
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return frames
    names = {p.name for p in parameters}
    return {name: frame for name, frame in frames.items() if name in names}


def _failure(exc: BaseException, source: AnalysisSource) -> dict:
    from jsonsafe import OutputTooLarge  # imported by _run already; at the top it would slow preflight

    traceback, line = user_traceback(exc, source)
    message = exception_message(exc)
    if isinstance(exc, MemoryError):
        return _error('memory_limit', f'the code ran out of memory ({message})', traceback, line)
    if isinstance(exc, OutputTooLarge):
        return _error('output_too_large', str(exc), traceback, line)
    denial = _denial(exc)
    if denial is not None:
        return _error('forbidden', f'the sandbox refused: {denial} ({message})', traceback, line)
    return _error('exception', message, traceback, line)


def _install_filter(envelope: _Envelope) -> bool:
    """Installs the seccomp filter, or reports that the sandbox is unavailable."""
    try:
        confine.install_seccomp_filter()
        return True
    except confine.SeccompUnavailable as exc:
        envelope.send(_error('unavailable', str(exc)))
        return False


def _read_dir(input_dir: Path):
    def read(name: str) -> str | None:
        path = input_dir / name
        return path.read_text(encoding='utf-8') if path.exists() else None

    return read


def _run(read, max_output_bytes: int, envelope: _Envelope) -> None:
    """Runs the job whose input files `read(name)` returns (None for a missing one)."""
    import numpy as np
    import pandas as pd

    from frames import frames_from
    from jsonsafe import encode_result

    frames = frames_from(read)
    source = analysis_source(read('code.py') or '')
    if not _install_filter(envelope):
        return
    pid = os.getpid()
    try:
        program = compile(source.source, FILENAME, 'exec')
        namespace = {'__name__': '__analysis__', 'pd': pd, 'np': np}
        # Warnings and stray error output read best next to the code's own prints.
        sys.stderr = sys.stdout
        exec(program, namespace)
        analysis = namespace.get('analysis')
        if not callable(analysis):
            raise TypeError(
                'the code does not define analysis(summary_df, activities_df, profile_df, population_df, labs_df)'
            )
        result = analysis(**_frames_for(analysis, frames))
        payload = {'status': 'ok', 'result': json.loads(encode_result(result, max_output_bytes))}
    except BaseException as exc:  # whatever the code raised, SystemExit included, is its failure to report
        payload = _failure(exc, source)
    sys.stderr = sys.__stderr__
    if os.getpid() != pid:  # a forked copy (only possible if seccomp is absent) must not report
        os._exit(0)
    sys.stdout.flush()
    envelope.send(payload)


def _read_stdin():
    """The pool's job: a JSON object of input file names and contents, read whole from stdin."""
    files = json.loads(sys.stdin.buffer.read().decode('utf-8'))
    if not isinstance(files, dict):
        raise ValueError('the job must be a JSON object of input files')
    return files.get


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument('command', choices=['probe', 'preflight', 'run', 'serve'])
    parser.add_argument('path', nargs='?')
    parser.add_argument('--cpu-seconds', type=int, required=True)
    parser.add_argument('--memory-mb', type=int, required=True)
    parser.add_argument('--max-output-bytes', type=int, required=True)
    return parser.parse_args(argv)


def execute(args: argparse.Namespace) -> int:
    """One command, in this process, which it confines first (rlimits here, seccomp before the code)."""
    confine.apply_rlimits(confine.Limits(cpu_seconds=args.cpu_seconds, memory_bytes=args.memory_mb * 1024 * 1024))
    envelope = _Envelope()
    if args.command == 'run':
        _run(_read_dir(Path(args.path)), args.max_output_bytes, envelope)
        return 0
    if args.command == 'serve':
        # Everything a run imports, before the job arrives: that is what the pool saves.
        importlib.import_module('frames')
        importlib.import_module('jsonsafe')
        _run(_read_stdin(), args.max_output_bytes, envelope)
        return 0
    if not _install_filter(envelope):
        return 0
    if args.command == 'probe':
        # The run path's imports, under the run's limits: a venv without pandas, or a memory
        # limit too small to import it, is found before any generated code is accepted.
        importlib.import_module('frames')

        envelope.send({'status': 'ok', 'result': None})
    else:
        from preflight import preflight

        envelope.send({'status': 'ok', 'result': preflight(Path(args.path).read_text(encoding='utf-8'))})
    return 0


def main(argv: list[str]) -> int:
    return execute(parse(argv))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
