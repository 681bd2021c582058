# Attack: read the worker's home directory (SSH keys, shell history, credentials).
# Contained by: /root in the sandbox is at most an empty path leading to the Python install.
# Expect: forbidden
return open('/root/.bash_history').read()
