# Attack: allocate 10 GB at once to push the host into swap or the OOM killer.
# Contained by: RLIMIT_AS; the allocation fails with MemoryError.
# Expect: memory_limit
return len(bytearray(10 * 1024**3))
