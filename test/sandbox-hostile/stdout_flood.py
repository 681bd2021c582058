# Attack: flood stdout to exhaust the worker's memory.
# Contained by: the worker stops reading and kills the sandbox past the output limit.
# Expect: output_too_large
while True:
    print('x' * 10000)
