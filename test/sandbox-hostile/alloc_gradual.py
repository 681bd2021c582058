# Attack: grow memory 64 MB at a time, touching every page.
# Contained by: RLIMIT_AS stops the growth at the memory limit.
# Expect: memory_limit
chunks = []
while True:
    chunks.append(b'x' * (64 * 1024 * 1024))
