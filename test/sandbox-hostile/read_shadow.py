# Attack: read the host's password hashes.
# Contained by: /etc in the sandbox holds only ld.so.cache; the uid could not read it anyway.
# Expect: forbidden
return open('/etc/shadow').read()
