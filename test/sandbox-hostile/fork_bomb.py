# Attack: a fork bomb, to exhaust the host's process table.
# Contained by: seccomp kills the process at the first fork; RLIMIT_NPROC would stop it at 32 tasks.
# Expect: forbidden
import os

while True:
    os.fork()
