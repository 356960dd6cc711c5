/* The layers under the flags, shared by the library's constructor and the
 * `wss` command so that both read a session exactly alike: defaults, the
 * session file, the environment.  The file is read with raw system calls
 * (common/sys.c), so this works before the C library is usable. */
#include "config.h"
#include "config/config.h"

#include "common/sys.h"

int wss_config_build(wss_config_t *c, const char *path, char *const *envp, const wss_toml_alloc_t *a, char *err,
		     size_t errlen)
{
	wss_config_defaults(c);
	if (path && *path) {
		char *buf;
		size_t len;
		int r = wss_file_read(path, WSS_CONFIG_FILE_MAX, &buf, &len);
		if (r) {
			wss_config_file_error(path, r, err, errlen);
			return r;
		}
		r = wss_config_load(c, path, buf, len, a, err, errlen);
		wss_file_free(buf, WSS_CONFIG_FILE_MAX);
		if (r)
			return r;
	}
	return wss_config_from_env(c, envp, err, errlen);
}
