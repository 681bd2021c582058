# Attack: write into the memory of the sandbox's init through /proc/1/mem, to run code in a process
# that is under neither the seccomp filter nor the rlimits.
# Contained by: there is no /proc in the sandbox; ptrace and process_vm_writev are killed by seccomp.
# Expect: forbidden
with open('/proc/1/mem', 'r+b') as mem:
    mem.write(b'\xcc')
return 'written'
