#!/bin/sh
# libwss.so exports exactly the interposed functions and the wss_* API.
. "$top_srcdir/tests/tap/tap.sh"
plan 2
want="aligned_alloc calloc free malloc malloc_usable_size memalign mmap mmap64 mprotect mremap munmap posix_memalign pread pread64 pthread_sigmask pvalloc pwrite pwrite64 read readv realloc reallocarray sigaction signal sigprocmask valloc write writev wss_tick"
got=$(nm -D --defined-only "$WSS_LIB" | awk '{print $3}' | sed 's/@.*//' | sort -u | tr '\n' ' ' | sed 's/ $//')
is "$got" "$want" "exported symbols match the allow-list"
nm -D "$WSS_LIB" | grep -q ' U _Znwm' && r=1 || r=0
ok $r "no dependency on C++ operator new (jemalloc's C++ object is left out)"
done_testing
