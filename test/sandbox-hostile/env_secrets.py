# Attack: collect every environment variable and process command line visible from inside, hoping
# for the worker's ANTHROPIC_API_KEY or DATABASE_URL.
# Contained by: bwrap --clearenv, and bwrap itself started with an empty environment; the sandbox has
# no /proc to look at other processes through. The run succeeds; the test checks that no secret
# (nor its name) is in what it found.
# Expect: ok
import os

found = {'environ': dict(os.environ)}
try:
    pids = [entry for entry in os.listdir('/proc') if entry.isdigit()]
except OSError as exc:
    pids, found['proc'] = [], repr(exc)
for pid in pids:
    for name in ('environ', 'cmdline'):
        try:
            found[f'{pid}/{name}'] = open(f'/proc/{pid}/{name}', 'rb').read().decode(errors='replace')
        except OSError as exc:
            found[f'{pid}/{name}'] = repr(exc)
return found
