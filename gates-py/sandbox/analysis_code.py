"""The generated code as a Python program, and its errors in terms of the lines the model wrote.

The model writes the body of `analysis(summary_df, activities_df, profile_df, population_df, labs_df)`;
sometimes it writes the whole function instead. Both are accepted. Line numbers in syntax errors and
tracebacks are the model's own, so its debug prompt can point at them.
"""

from __future__ import annotations

import ast
import textwrap
import traceback
from dataclasses import dataclass

FILENAME = '<analysis>'
SIGNATURE = 'def analysis(summary_df, activities_df, profile_df, population_df, labs_df):'
MAX_MESSAGE_CHARS = 2000


@dataclass(frozen=True)
class AnalysisSource:
    source: str
    # Lines the wrapper added above the model's first line.
    line_offset: int
    user_lines: list[str]

    def user_line(self, line: int | None) -> int | None:
        return None if line is None else max(1, line - self.line_offset)

    def user_col(self, line: int, col: int) -> int:
        """A column of `source` as a column of the model's line (the wrapper re-indents lines)."""
        source_lines = self.source.splitlines()
        user = line - self.line_offset
        if not (1 <= line <= len(source_lines) and 1 <= user <= len(self.user_lines)):
            return max(1, col)
        wrapped, original = source_lines[line - 1], self.user_lines[user - 1]
        shift = (len(wrapped) - len(wrapped.lstrip())) - (len(original) - len(original.lstrip()))
        return max(1, col - shift)


def _defines_analysis(code: str) -> bool:
    try:
        module = ast.parse(code, FILENAME)
    except SyntaxError:
        return False
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == 'analysis' for node in module.body
    )


def analysis_source(code: str) -> AnalysisSource:
    # Bodies often arrive indented as if already inside the function.
    dedented = textwrap.dedent(code)
    user_lines = code.splitlines()
    if _defines_analysis(dedented):
        return AnalysisSource(dedented, 0, user_lines)
    body = textwrap.indent(dedented, '    ')
    return AnalysisSource(f'{SIGNATURE}\n{body}\n', 1, user_lines)


def _cap(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 1] + '…'


def exception_message(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError) and exc.filename == FILENAME:
        # The standard form quotes the wrapped program's line number, not the model's.
        return _cap(f'{type(exc).__name__}: {exc.msg}')
    return _cap(''.join(traceback.format_exception_only(type(exc), exc)).strip())


def user_traceback(exc: BaseException, source: AnalysisSource) -> tuple[str, int | None]:
    """The traceback cut down to the model's own frames, and the line it failed on.

    Frames inside pandas or the runner say nothing the model can act on, and the runner's paths are
    no business of the generated code.
    """
    if isinstance(exc, SyntaxError) and exc.filename == FILENAME:
        line = source.user_line(exc.lineno)
        text = source.user_lines[line - 1].strip() if line is not None and line <= len(source.user_lines) else ''
        return f'  line {line}\n    {text}\n{exception_message(exc)}', line
    lines = ['Traceback (most recent call last):']
    last_line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename != FILENAME:
            continue
        last_line = source.user_line(frame.lineno)
        lines.append(f'  line {last_line}, in {frame.name}')
        if last_line is not None and last_line <= len(source.user_lines):
            lines.append(f'    {source.user_lines[last_line - 1].strip()}')
    lines.append(exception_message(exc))
    return _cap('\n'.join(lines)), last_line
