// tests/integration/demangle.sh: fill is warmed up on a small array, so that
// the big one is first touched by its optimized (JIT) code, which node
// names in /tmp/perf-PID.map when run with --perf-basic-prof.
function fill(a, n) { for (let i = 0; i < n; i += 1024) a[i] = (i >> 10) & 255; }
const small = new Uint8Array(1 << 16);
for (let r = 0; r < 20000; r++) fill(small, small.length);
const a = new Uint8Array(64 << 20);
fill(a, a.length);
console.log("jit", a[4096]);
