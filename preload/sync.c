/* Futex waits on synchronisation objects in tracked memory (a mutex in
 * .bss, a condition variable in a heap object): the kernel reads the futex
 * word itself and fails the wait with EFAULT when its page is armed, and the
 * C library aborts ("The futex facility returned an unexpected error code").
 * These wrappers pin the object, and the timeout it is given, for the call
 * (engine/pins.c).  Calls that may not block try the non-blocking variant first,
 * so the uncontended path costs one extra trylock-sized call. */
#include "config.h"
#include "preload/preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <threads.h>
#include <time.h>

#include "engine/engine.h"

/* The C library's functions, resolved at start-up (see io.c); the current
 * version of pthread_cond_* (there is an old GLIBC_2.2.5 one). */
#define SYNC_FUNCS(X) \
	X(pthread_mutex_timedlock) X(pthread_mutex_clocklock) X(pthread_cond_clockwait) \
	X(pthread_rwlock_timedrdlock) X(pthread_rwlock_timedwrlock) X(pthread_barrier_wait) X(pthread_once) \
	X(sem_wait) X(sem_trywait) X(sem_timedwait) X(sem_clockwait) \
	X(mtx_lock) X(mtx_trylock) X(mtx_timedlock) X(cnd_wait) X(cnd_timedwait)
#define VERSIONED_FUNCS(X) X(pthread_cond_wait) X(pthread_cond_timedwait)
SYNC_FUNCS(WSS_REAL_DECLARE)
VERSIONED_FUNCS(WSS_REAL_DECLARE)
#define RESOLVEV(name) \
	real_##name = (__typeof__(name) *)(dlvsym(RTLD_NEXT, #name, "GLIBC_2.3.2") ?: dlsym(RTLD_NEXT, #name));
#define REALV(name, ver) \
	if (!real_##name) \
	RESOLVEV(name)

#define PIN2(a, alen, b, blen, call) \
	do { \
		int pa_ = wss_engine_pin((a), (alen)); \
		int pb_ = wss_engine_pin((b), (blen)); \
		if (pa_ < 0) \
			wss_touch_range((a), (alen)); \
		if (pb_ < 0) \
			wss_touch_range((b), (blen)); \
		int r_ = call; \
		wss_engine_unpin(pb_); \
		wss_engine_unpin(pa_); \
		return r_; \
	} while (0)

/* A condition wait: the condition, its mutex, and the timeout. */
#define PIN3(c, m, t, call) \
	do { \
		int pt_ = wss_engine_pin((t), TS); \
		if (pt_ < 0) \
			wss_touch_range((t), TS); \
		PIN2(c, sizeof *(c), m, sizeof *(m), ({ \
			int r3_ = call; \
			wss_engine_unpin(pt_); \
			r3_; \
		})); \
	} while (0)

#define TS sizeof(struct timespec)

/* jemalloc locks its mutexes through pthread_mutex_lock, also while it
 * initialises on the first malloc, and dlsym may malloc: so these two never
 * resolve lazily.  wss_sync_init (start-up) resolves them; before that, a
 * trylock loop (trylock is not wrapped) stands in. */
static int (*real_mutex_lock)(pthread_mutex_t *);
static int (*real_rdlock)(pthread_rwlock_t *);
static int (*real_wrlock)(pthread_rwlock_t *);

void wss_sync_init(void)
{
	SYNC_FUNCS(WSS_REAL_RESOLVE)
	VERSIONED_FUNCS(RESOLVEV)
	real_rdlock = (int (*)(pthread_rwlock_t *))dlsym(RTLD_NEXT, "pthread_rwlock_rdlock");
	real_wrlock = (int (*)(pthread_rwlock_t *))dlsym(RTLD_NEXT, "pthread_rwlock_wrlock");
	__atomic_store_n(&real_mutex_lock, (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock"),
			 __ATOMIC_RELEASE);
}

WSS_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	int r = pthread_mutex_trylock(m);
	if (r != EBUSY)
		return r;
	int (*real)(pthread_mutex_t *) = __atomic_load_n(&real_mutex_lock, __ATOMIC_ACQUIRE);
	if (!real) {
		while ((r = pthread_mutex_trylock(m)) == EBUSY)
			sched_yield();
		return r;
	}
	PIN2(m, sizeof *m, NULL, 0, real(m));
}

WSS_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t)
{
	WSS_REAL(pthread_mutex_timedlock);
	PIN2(m, sizeof *m, t, TS, real_pthread_mutex_timedlock(m, t));
}

WSS_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t c, const struct timespec *t)
{
	WSS_REAL(pthread_mutex_clocklock);
	PIN2(m, sizeof *m, t, TS, real_pthread_mutex_clocklock(m, c, t));
}

WSS_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	REALV(pthread_cond_wait, "GLIBC_2.3.2");
	PIN2(c, sizeof *c, m, sizeof *m, real_pthread_cond_wait(c, m));
}

WSS_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
	REALV(pthread_cond_timedwait, "GLIBC_2.3.2");
	PIN3(c, m, t, real_pthread_cond_timedwait(c, m, t));
}

WSS_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t k, const struct timespec *t)
{
	WSS_REAL(pthread_cond_clockwait);
	PIN3(c, m, t, real_pthread_cond_clockwait(c, m, k, t));
}

static int rwlock(pthread_rwlock_t *l, int (*try)(pthread_rwlock_t *), int (*real)(pthread_rwlock_t *))
{
	int r = try(l);
	if (r != EBUSY)
		return r;
	if (!real) {
		while ((r = try(l)) == EBUSY)
			sched_yield();
		return r;
	}
	PIN2(l, sizeof *l, NULL, 0, real(l));
}

WSS_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l) { return rwlock(l, pthread_rwlock_tryrdlock, real_rdlock); }
WSS_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l) { return rwlock(l, pthread_rwlock_trywrlock, real_wrlock); }

WSS_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *t)
{
	WSS_REAL(pthread_rwlock_timedrdlock);
	PIN2(l, sizeof *l, t, TS, real_pthread_rwlock_timedrdlock(l, t));
}

WSS_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *t)
{
	WSS_REAL(pthread_rwlock_timedwrlock);
	PIN2(l, sizeof *l, t, TS, real_pthread_rwlock_timedwrlock(l, t));
}

WSS_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	WSS_REAL(pthread_barrier_wait);
	PIN2(b, sizeof *b, NULL, 0, real_pthread_barrier_wait(b));
}

WSS_EXPORT int pthread_once(pthread_once_t *o, void (*fn)(void))
{
	WSS_REAL(pthread_once);
	PIN2(o, sizeof *o, NULL, 0, real_pthread_once(o, fn));
}

WSS_EXPORT int sem_wait(sem_t *s)
{
	WSS_REAL(sem_wait);
	WSS_REAL(sem_trywait);
	int e = errno;
	if (real_sem_trywait(s) == 0)
		return 0;
	if (errno != EAGAIN)
		return -1;
	errno = e;
	PIN2(s, sizeof *s, NULL, 0, real_sem_wait(s));
}

WSS_EXPORT int sem_timedwait(sem_t *s, const struct timespec *t)
{
	WSS_REAL(sem_timedwait);
	PIN2(s, sizeof *s, t, TS, real_sem_timedwait(s, t));
}

WSS_EXPORT int sem_clockwait(sem_t *s, clockid_t c, const struct timespec *t)
{
	WSS_REAL(sem_clockwait);
	PIN2(s, sizeof *s, t, TS, real_sem_clockwait(s, c, t));
}

/* C11 threads call the pthread functions inside the C library, not ours. */
WSS_EXPORT int mtx_lock(mtx_t *m)
{
	WSS_REAL(mtx_lock);
	WSS_REAL(mtx_trylock);
	int r = real_mtx_trylock(m);
	if (r != thrd_busy)
		return r;
	PIN2(m, sizeof *m, NULL, 0, real_mtx_lock(m));
}

WSS_EXPORT int mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict t)
{
	WSS_REAL(mtx_timedlock);
	PIN2(m, sizeof *m, t, TS, real_mtx_timedlock(m, t));
}

WSS_EXPORT int cnd_wait(cnd_t *c, mtx_t *m)
{
	WSS_REAL(cnd_wait);
	PIN2(c, sizeof *c, m, sizeof *m, real_cnd_wait(c, m));
}

WSS_EXPORT int cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m, const struct timespec *restrict t)
{
	WSS_REAL(cnd_timedwait);
	PIN3(c, m, t, real_cnd_timedwait(c, m, t));
}
