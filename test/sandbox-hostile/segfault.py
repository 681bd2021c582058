# Attack: crash the interpreter through ctypes (a stand-in for any memory-corrupting C call).
# Contained by: only the sandboxed process dies; the worker sees a crashed run.
# Expect: crashed
import ctypes

return ctypes.string_at(0)
