# Attack: tamper with the input data in place.
# Contained by: /input is a read-only bind.
# Expect: forbidden
with open('/input/summary.json', 'w') as f:
    f.write('[]')
return 'written'
