# Attack: allocate 10 GB through numpy (C allocations, not Python objects).
# Contained by: RLIMIT_AS applies to every allocation in the process.
# Expect: memory_limit
return float(np.ones(10 * 1024**3, dtype=np.uint8).sum())
