# A peak in a nested function after a quiet start (tests/integration/
# interpreters.sh): the list's 4 Mi pointers are written by the
# interpreter's own code (list_repeat), so every frame of the stack that
# first touches its pages is the interpreter's or the C library's.
import time


def build(n):
    return [0] * n


def phase(n):
    keep = build(n)
    return len(keep)


time.sleep(0.5)  # past the peak detector's warm-up, whatever start-up took
print("peak", phase(4 << 20) >> 20)
