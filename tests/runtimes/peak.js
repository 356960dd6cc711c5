// A peak in a nested function after a quiet start (tests/integration/
// interpreters.sh): 32 MiB of a typed array, one write a page.
function build(n) {
	const a = new Float64Array(n);
	for (let i = 0; i < n; i += 512) a[i] = i;
	return a;
}
function phase(n) {
	const keep = build(n);
	return keep.length;
}
setTimeout(() => console.log("peak", phase(4 << 20) >> 20), 500);
