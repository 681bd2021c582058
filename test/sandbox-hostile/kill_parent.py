# Attack: kill the process that started the code, hoping to take the worker down.
# Contained by: seccomp kills a process that signals anything but itself. The parent in the sandbox's
# pid namespace is bwrap's init, not the worker, which is not visible at all.
# Expect: forbidden
import os

os.kill(os.getppid(), 9)
return 'killed'
