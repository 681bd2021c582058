import pytest

from analysis_code import FILENAME, analysis_source, user_traceback


def run(code):
    source = analysis_source(code)
    try:
        namespace = {}
        exec(compile(source.source, FILENAME, 'exec'), namespace)
        namespace['analysis'](None, None, None, None, None)
    except Exception as exc:
        return user_traceback(exc, source)
    pytest.fail('the code did not raise')


def test_a_body_is_wrapped_and_errors_carry_the_models_line_numbers():
    traceback, line = run('x = 1\ny = {}\nreturn y["missing"]')
    assert line == 3
    assert traceback.splitlines() == [
        'Traceback (most recent call last):',
        '  line 3, in analysis',
        '    return y["missing"]',
        "KeyError: 'missing'",
    ]


def test_a_syntax_error_names_the_models_line_not_the_wrappers():
    traceback, line = run('x = 1\ndef f(:\n    pass')
    assert line == 2
    assert traceback == '  line 2\n    def f(:\nSyntaxError: invalid syntax'


def test_frames_outside_the_generated_code_are_left_out():
    traceback, line = run('import json\nreturn json.loads("{")')
    assert line == 2
    # Only the generated code's frame: json's own frames (and their paths) are left out.
    assert traceback.count('\n  line ') == 1 and 'File "' not in traceback
    assert traceback.splitlines()[-1].startswith('json.decoder.JSONDecodeError: Expecting property name')


def test_an_indented_body_and_a_whole_function_are_both_accepted():
    assert analysis_source('    return 1').line_offset == 1
    whole = 'def analysis(summary_df, activities_df, profile_df, population_df):\n    return 1'
    assert analysis_source(whole).line_offset == 0
