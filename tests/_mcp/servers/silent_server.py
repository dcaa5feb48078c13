"""A server that never answers: it reads stdin until the client closes it, then exits."""

import sys

sys.stdin.buffer.read()
