import pytest

from preflight import preflight


def test_clean_code_passes_untouched():
    code = "return summary_df['steps'].mean()"
    assert preflight(code) == {'ok': True, 'code': code, 'autoFixed': False}


@pytest.mark.parametrize(
    'broken, fixed',
    [
        ('for x in xs:\ntotal += x\nreturn total', 'for x in xs:\n    total += x\nreturn total'),
        # Each opener in an if/else chain, and a comment between opener and body.
        ('if a:\n# why\nb = 1\nelse:\nb = 2\nreturn b', 'if a:\n# why\n    b = 1\nelse:\n    b = 2\nreturn b'),
        ('try:\nx = 1\nexcept KeyError:\nx = 2\nreturn x', 'try:\n    x = 1\nexcept KeyError:\n    x = 2\nreturn x'),
        # A body indented as if inside the function keeps its own indentation.
        (
            '    with open(p) as f:\n    data = f.read()\n    return data',
            '    with open(p) as f:\n        data = f.read()\n    return data',
        ),
        # Nested: the repair indents past the opener, not to a fixed column.
        ('for a in b:\n    while c:\n    c -= 1\nreturn c', 'for a in b:\n    while c:\n        c -= 1\nreturn c'),
    ],
)
def test_unindented_block_bodies_are_repaired(broken, fixed):
    assert preflight(broken) == {'ok': True, 'code': fixed, 'autoFixed': True}


def test_syntax_errors_point_at_the_models_line_and_column():
    code = "m = summary_df['steps'].mean()\nif m > 5000\n    return m\nreturn 0"
    assert preflight(code) == {'ok': False, 'error': {'line': 2, 'col': 12, 'message': "expected ':'"}}
    indented = '    m = 1\n    if m > 5000\n        return m'
    assert preflight(indented)['error'] == {'line': 2, 'col': 16, 'message': "expected ':'"}


def test_other_indentation_errors_are_not_guessed_at():
    result = preflight('x = 1\n        y = 2\nreturn x')
    assert result['ok'] is False and result['error']['line'] == 2


def test_a_whole_function_is_accepted_and_an_empty_body_is_not():
    code = 'def analysis(summary_df, activities_df, profile_df, population_df):\n    return 1'
    assert preflight(code)['ok'] is True
    assert preflight('  \n')['ok'] is False
