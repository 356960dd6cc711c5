// Names that need demangling (tests/integration/demangle.sh): memory
// allocated inside a class template's member function in a namespace, and
// written through an overloaded function, so that the allocation site's
// stack and the first-touch sites read as C++ names.  Manual ticks.
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" void wss_tick(void) __attribute__((weak));

namespace names {
template <typename T> class Pool {
      public:
	__attribute__((noinline)) T *grow(unsigned long n)
	{
		T *p = static_cast<T *>(std::malloc(n * sizeof(T)));
		if (p)
			p[0] = T();
		return p;
	}
};

__attribute__((noinline)) void fill(char *p, unsigned long n)
{
	for (unsigned long i = 0; i < n; i += 4096)
		p[i] = 1;
}

__attribute__((noinline)) void fill(char *p, unsigned long n, char v)
{
	std::memset(p, v, n);
}
} // namespace names

int main()
{
	names::Pool<char> pool;
	unsigned long n = 16UL << 20;
	char *p = pool.grow(n);
	if (!p)
		return 1;
	for (int i = 0; i < 3; i++) {
		names::fill(p, n);
		names::fill(p, n / 2, 2);
		if (wss_tick)
			wss_tick();
	}
	std::printf("names: %d\n", p[4096] + p[n - 1]);
	std::free(p);
	return 0;
}
