# Attack: run a shell command.
# Contained by: seccomp kills the process when system() clones.
# Expect: forbidden
import os

return os.system('id > /tmp/owned')
