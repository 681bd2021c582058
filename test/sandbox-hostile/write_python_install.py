# Attack: plant a module in the venv so the next run (or the gates) import it.
# Contained by: the interpreter and the venv are read-only binds.
# Expect: forbidden
import pandas

with open(pandas.__file__.replace('__init__.py', 'sitecustomize.py'), 'w') as f:
    f.write('import os')
return 'written'
