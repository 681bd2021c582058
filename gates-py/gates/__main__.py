"""`python -m gates`: a long-lived gates process, so Python start-up and the numpy/scipy import are
paid once per process rather than once per finding (ARCHITECTURE.md, "Python side").

Serves the line protocol in gates.protocol until stdin closes.
"""

import sys

from gates.protocol import encode, handle_line


def main() -> None:
    sys.stdin.reconfigure(encoding='utf-8')
    protocol_out = sys.stdout
    # Anything a library prints goes to stderr: stdout carries protocol lines and nothing else.
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if line.strip():
            protocol_out.write(encode(handle_line(line)) + '\n')
            protocol_out.flush()


if __name__ == '__main__':
    main()
