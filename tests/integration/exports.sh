#!/bin/sh
# libwss.so exports exactly the interposed functions and the wss_* API.
. "$top_srcdir/tests/tap/tap.sh"
plan 2
want="__fread_chk __fread_unlocked_chk __pread64_chk __pread_chk __read_chk aligned_alloc calloc fread fread_unlocked free fwrite fwrite_unlocked malloc malloc_usable_size memalign mmap mmap64 mprotect mremap munmap posix_memalign pread pread64 pthread_sigmask pvalloc pwrite pwrite64 read readv realloc reallocarray sigaction signal sigprocmask valloc write writev wss_tick"
got=$(nm -D --defined-only "$WSS_LIB" | awk '{print $3}' | sed 's/@.*//' | LC_ALL=C sort -u | tr '\n' ' ' | sed 's/ $//')
is "$got" "$want" "exported symbols match the allow-list"
nm -D "$WSS_LIB" | grep -q ' U _Znwm' && r=1 || r=0
ok $r "no dependency on C++ operator new (jemalloc's C++ object is left out)"
done_testing
