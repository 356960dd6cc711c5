/* The library tests/progs/codepages loads: 16 functions, each alone on its
 * page, and a runner that calls the first n of them. */
#define PAGE_ALIGNED __attribute__((noinline, noipa, aligned(4096)))
#define F(n) static PAGE_ALIGNED int g##n(int x) { return x * 5 + n; }
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15)
static int (*const gs[16])(int) = {g0, g1, g2, g3, g4, g5, g6, g7, g8, g9, g10, g11, g12, g13, g14, g15};
static volatile int sink;

void codelib_run(int n);
__attribute__((visibility("default"))) PAGE_ALIGNED void codelib_run(int n)
{
	for (int i = 0; i < n && i < 16; i++)
		sink += gs[i](i);
}
