# Attack: call libc's system() directly through ctypes, below Python's own checks.
# Contained by: seccomp filters syscalls, whoever makes them; the process is killed when system() clones.
# Expect: forbidden
import ctypes

return ctypes.CDLL(None).system(b'id')
