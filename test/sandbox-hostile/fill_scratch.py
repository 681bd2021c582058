# Attack: fill the disk (or the memory behind a tmpfs) through the scratch directory.
# Contained by: /tmp is a 64 MB tmpfs; RLIMIT_FSIZE caps any one file at the same size.
# Expect: forbidden
chunk = b'x' * (8 * 1024 * 1024)
for i in range(1000):
    with open(f'/tmp/fill-{i}', 'wb') as f:
        f.write(chunk)
return 'filled'
