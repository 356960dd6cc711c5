/* The engine's settings from a session's configuration (preload/settings.c). */
#ifndef WSS_PRELOAD_SETTINGS_H
#define WSS_PRELOAD_SETTINGS_H

#include "config/config.h"
#include "engine/engine.h"

/* Fill set from c; the header's configuration members are formatted here,
 * so the engine never sees the config or TOML.  c must outlive the engine
 * (set points into it).  Returns 0 or ENOMEM.  init. */
int wss_engine_settings(const wss_config_t *c, wss_engine_settings_t *set);

/* Memory for parsing the session file, straight from mmap (the C
 * library's malloc may not be ours, or not be ready). */
extern const wss_toml_alloc_t wss_settings_parse_alloc;

#endif
