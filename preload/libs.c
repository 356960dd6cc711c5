/* dlclose: the engine follows shared libraries' data segments
 * (track.library_data, engine/libdata.c) and must not keep a library
 * armed that the call may unmap: it is told before and after the real
 * call.  Everything else about the loader's list is the engine's
 * (engine/loader.c reads it inside every tick). */
#include "config.h"
#include "preload/preload.h"

#include <dlfcn.h>
#include <errno.h>

#include "engine/engine.h"

static int (*real_dlclose)(void *);

/* Destructors that run inside the call touch their data untracked. */
WSS_EXPORT int dlclose(void *handle)
{
	if (!real_dlclose)
		real_dlclose = (__typeof__(real_dlclose))dlsym(RTLD_NEXT, "dlclose");
	int saved = errno;
	wss_engine_dlclose_begin();
	errno = saved;
	int r = real_dlclose(handle);
	saved = errno;
	wss_engine_dlclose_end();
	errno = saved;
	return r;
}
