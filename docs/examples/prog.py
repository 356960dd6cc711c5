# The trace example of README.md and docs/analyses.md: fill a dict of
# 300,000 strings, shuffle its keys and read two thirds of them back.
import random
random.seed(1)
d = {}
for i in range(300000):
    d[i] = str(i) * 3
keys = list(d)
random.shuffle(keys)
s = 0
for k in keys[:200000]:
    s += len(d[k])
print(s)
