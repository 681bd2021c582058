# Attack: drop a file into the host's /tmp.
# Contained by: /tmp in the sandbox is a private tmpfs, gone with the run. The write succeeds there;
# the test checks the host's /tmp is untouched.
# Expect: ok
with open('/tmp/__HOST_TMP_NAME__', 'w') as f:
    f.write('written from the sandbox')
return 'written'
