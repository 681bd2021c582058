# Attack: read the environment of the sandbox's init (bwrap, started by the worker) through /proc.
# Contained by: there is no /proc in the sandbox, and bwrap is started with an empty environment.
# Expect: forbidden
return open('/proc/1/environ').read()
