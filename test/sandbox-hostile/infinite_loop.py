# Attack: never return, without using CPU (a sleeping loop escapes a CPU limit).
# Contained by: the wall-clock limit kills the whole sandbox.
# Expect: timeout
import time

while True:
    time.sleep(0.1)
