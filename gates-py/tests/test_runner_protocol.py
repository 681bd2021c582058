"""`python -m gates` as the TypeScript side drives it: one long-lived process, a line per request."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from builders import association, correlated_pair, scalar

from gates.protocol import encode, handle_line

GATES_PY = Path(__file__).resolve().parent.parent


@pytest.fixture
def gates_process():
    with subprocess.Popen(
        [sys.executable, '-m', 'gates'],
        cwd=GATES_PY,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        yield process
        process.kill()


def ask(process, line: str) -> dict:
    process.stdin.write(line + '\n')
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def test_one_process_answers_request_after_request(gates_process):
    planted = association(*correlated_pair(180, 0.6, seed=11), finding_id='ds-001')
    noise = association(*correlated_pair(180, 0.0, seed=1), finding_id='ds-002')

    first = ask(gates_process, json.dumps({'id': 'req-1', 'findings': [planted, noise]}))
    second = ask(
        gates_process,
        json.dumps({'id': 'req-2', 'findings': [scalar([60.0, 61, 59, 62, 60, 58, 61, 60, 59, 63])]}),
    )

    assert first['id'] == 'req-1'
    assert [(r['finding_id'], r['verdict']) for r in first['results']] == [
        ('ds-001', 'validated'),
        ('ds-002', 'rejected'),
    ]
    assert second['id'] == 'req-2'
    assert second['results'][0]['verdict'] == 'validated'


def test_an_unusable_line_is_answered_and_the_process_keeps_serving(gates_process):
    unreadable = ask(gates_process, '{not json')
    assert unreadable['id'] is None
    assert unreadable['error'].startswith('JSONDecodeError: Expecting property name')

    shapeless = ask(gates_process, json.dumps({'id': 'req-3', 'findings': [{'feature_values': []}]}))
    assert shapeless['id'] == 'req-3'
    assert 'request.findings must be an array' in shapeless['error']

    assert ask(gates_process, json.dumps({'id': 'req-4', 'findings': []})) == {'id': 'req-4', 'results': []}


def test_the_process_exits_cleanly_when_stdin_closes(gates_process):
    gates_process.stdin.close()
    assert gates_process.wait(timeout=30) == 0
    assert gates_process.stdout.read() == ''


@pytest.mark.parametrize(
    'request_body, message',
    [
        ([], 'a request must be a JSON object'),
        ({'findings': []}, 'request.id must be a string'),
        ({'id': 'r', 'findings': {}}, 'request.findings must be an array'),
        ({'id': 'r', 'findings': [{'finding': {'id': 7}}]}, 'request.findings must be an array'),
    ],
)
def test_malformed_requests_name_the_problem(request_body, message):
    response = handle_line(json.dumps(request_body))
    assert message in response['error']
    assert 'results' not in response


def test_only_finite_numbers_reach_the_wire():
    line = encode(
        {'id': 'r', 'results': [{'a': float('nan'), 'b': [float('inf'), -float('inf'), 1.5], 'c': None}]}
    )
    assert json.loads(line) == {'id': 'r', 'results': [{'a': None, 'b': [None, None, 1.5], 'c': None}]}
