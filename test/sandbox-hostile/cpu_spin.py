# Attack: burn CPU forever.
# Contained by: RLIMIT_CPU; SIGXCPU ends the process at the soft limit.
# Expect: cpu_limit
while True:
    pass
