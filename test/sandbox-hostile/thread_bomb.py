# Attack: start threads without end.
# Contained by: RLIMIT_NPROC (and RLIMIT_AS, which bounds the stacks); starting a thread fails.
# Expect: exception
import threading
import time

while True:
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
