"""Syntax check of generated code before it costs a sandbox run, with one automatic repair.

The commonest defect in model-written Python is a block opener (`if x:`, `for ...:`, `try:`, ...)
followed by a body line that lost its indentation. The parser names that line exactly
("expected an indented block"), so the repair indents it one level past the opener and parses
again; nothing else is rewritten. Only the parser reads the code: it is never executed here.
"""

from __future__ import annotations

import ast
import re

from analysis_code import FILENAME, AnalysisSource, analysis_source

INDENT = '    '
# Each repair fixes one line; a body with more broken lines than this is not worth guessing at.
MAX_REPAIRS = 20
OPENER_LINE = re.compile(r'on line (\d+)$')


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _indent_body_line(code: str, body_line: int, opener_line: int) -> str | None:
    """The code with `body_line` indented one level past `opener_line` (both 1-based)."""
    lines = code.split('\n')
    body, opener = body_line - 1, opener_line - 1
    if not 0 <= opener < body < len(lines) or not lines[body].strip():
        return None
    lines[body] = _indentation(lines[opener]) + INDENT + lines[body].lstrip()
    return '\n'.join(lines)


def _syntax_error(error: SyntaxError, wrapped: AnalysisSource) -> dict:
    line = error.lineno or 1
    return {
        'ok': False,
        'error': {
            'line': wrapped.user_line(line),
            'col': wrapped.user_col(line, error.offset or 1),
            'message': error.msg,
        },
    }


def _repair(error: SyntaxError, code: str, line_offset: int) -> str | None:
    if not (isinstance(error, IndentationError) and error.msg.startswith('expected an indented block')):
        return None
    # Python 3.10+ names the opener: "expected an indented block after 'if' statement on line 3".
    opener = OPENER_LINE.search(error.msg)
    if opener is None:
        return None
    repaired = _indent_body_line(code, (error.lineno or 0) - line_offset, int(opener[1]) - line_offset)
    return repaired if repaired != code else None


def preflight(code: str) -> dict:
    """{"ok": true, "code", "autoFixed"} or {"ok": false, "error": {"line", "col", "message"}}."""
    if not code.strip():
        return {'ok': False, 'error': {'line': 1, 'col': 1, 'message': 'the analysis code is empty'}}
    repairs = 0
    while True:
        wrapped = analysis_source(code)
        try:
            ast.parse(wrapped.source, FILENAME)
            return {'ok': True, 'code': code, 'autoFixed': repairs > 0}
        except (MemoryError, RecursionError):
            message = 'the code is too large or too deeply nested'
            return {'ok': False, 'error': {'line': 1, 'col': 1, 'message': message}}
        except SyntaxError as error:
            repaired = _repair(error, code, wrapped.line_offset) if repairs < MAX_REPAIRS else None
            if repaired is None:
                return _syntax_error(error, wrapped)
            code = repaired
            repairs += 1
