# Attack: return a result too large for the worker to hold or pass on.
# Contained by: the runner refuses a result over the output limit.
# Expect: output_too_large
return 'x' * (8 * 1024 * 1024)
