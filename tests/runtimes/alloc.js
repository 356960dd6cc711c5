// tests/integration/runtimes.sh: node (V8: a JIT, its own heap, threads).
const m = new Map();
for (let i = 0; i < 200000; i++) m.set(i, { v: i * 7, s: 'x' + i });
const a = Array.from(m.values(), (o) => o.v).sort((x, y) => y - x);
const b = Buffer.alloc(4 << 20, 1);
let s = 0;
for (let i = 0; i < b.length; i += 4096) s += b[i];
console.log(m.size, a[0], s);
