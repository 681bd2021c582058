# Attack: run another program.
# Contained by: seccomp kills the process at clone() (and execve() would be killed too).
# Expect: forbidden
import subprocess

return subprocess.run(['ls', '/'], capture_output=True, text=True).stdout
