# Attack: flood stdout below Python, writing to file descriptor 1 directly.
# Contained by: the worker counts bytes on the pipe, whoever wrote them.
# Expect: output_too_large
import os

while True:
    os.write(1, b'x' * 65536)
