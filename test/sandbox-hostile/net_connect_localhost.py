# Attack: connect to a service on the worker's own machine (Postgres' port on the loopback).
# Contained by: seccomp kills the process at socket(AF_INET); the sandbox's network namespace has
# its own empty loopback anyway.
# Expect: forbidden
import socket

socket.create_connection(('127.0.0.1', 5432), timeout=2)
return 'connected'
