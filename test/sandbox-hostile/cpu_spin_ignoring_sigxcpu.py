# Attack: burn CPU forever after ignoring SIGXCPU, the CPU limit's warning shot.
# Contained by: RLIMIT_CPU's hard limit, one second later, is SIGKILL, which cannot be ignored.
# Expect: crashed
import signal

signal.signal(signal.SIGXCPU, signal.SIG_IGN)
while True:
    pass
