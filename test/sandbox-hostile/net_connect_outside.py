# Attack: connect to an address on the internet to exfiltrate the data.
# Contained by: seccomp kills the process at socket(AF_INET); the network namespace has no route.
# Expect: forbidden
import socket

socket.create_connection(('1.1.1.1', 443), timeout=2)
return 'connected'
