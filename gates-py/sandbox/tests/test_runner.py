import errno

import pytest

from runner import _denial


@pytest.mark.parametrize(
    'error, denied',
    [
        (PermissionError(errno.EACCES, 'Permission denied', '/etc/shadow'), True),
        (OSError(errno.EROFS, 'Read-only file system', '/input/summary.json'), True),
        (FileNotFoundError(errno.ENOENT, 'No such file', '/root/.ssh/id_rsa'), True),
        (FileNotFoundError(errno.ENOENT, 'No such file', '/tmp/missing.csv'), False),
        (FileNotFoundError(errno.ENOENT, 'No such file', 'relative.csv'), False),
        (KeyError('steps'), False),
    ],
)
def test_denials_are_told_apart_from_bugs(error, denied):
    assert (_denial(error) is not None) is denied


def test_a_denial_wrapped_by_a_library_is_still_a_denial():
    try:
        try:
            open('/nonexistent-dir/x')
        except OSError as inner:
            raise ValueError('could not load') from inner
    except ValueError as outer:
        assert _denial(outer) is not None
