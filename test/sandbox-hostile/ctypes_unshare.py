# Attack: create a user namespace through libc to gain capabilities inside it (kernel attack surface).
# Contained by: seccomp kills the process at unshare().
# Expect: forbidden
import ctypes

CLONE_NEWUSER = 0x10000000
return ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWUSER)
