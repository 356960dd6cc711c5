/* The engine's own table of loaded objects and their unwind tables
 * (modtab.c), so that a stack capture never reads the dynamic loader's
 * list.  Contexts as in engine.h: AS-safe (fault path), init; "sync" means
 * inside dl_iterate_phdr (the loader's list lock held), serialised with
 * other syncs by the caller (loader.c's tick lock, or start-up). */
#ifndef WSS_ENGINE_MODTAB_H
#define WSS_ENGINE_MODTAB_H

#include <link.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

enum {
	WSS_MODTAB_OK,    /* ip has unwind information: libunwind finds it in our table */
	WSS_MODTAB_END,   /* ip is in a known object without unwind information for it */
	WSS_MODTAB_LATER, /* ip is in no object we know, or one whose entry may be stale */
};

/* Sync the table with the loader's list, inside dl_iterate_phdr: begin
 * (closes the table to captures and waits for those inside), add each
 * object listed, end (drops the objects not listed; startup: those added
 * are never unloaded).  Serialised by the caller (loader.c). */
void wss_modtab_sync_begin(void);
void wss_modtab_sync_add(const struct dl_phdr_info *info);
void wss_modtab_sync_end(bool startup);
/* Enter the table for one capture; false while a sync writes it (the
 * capture is then left for later).  AS-safe, never waits. */
bool wss_modtab_enter(void);
/* Leave it.  AS-safe. */
void wss_modtab_leave(void);
/* Whether libunwind can find a frame's unwind information in our table
 * alone (see the enum).  lookup is the address libunwind looks up: the IP
 * itself for the interrupted frame and a frame after a signal frame, IP - 1
 * for a return address.  *memo: -1 at the start of a capture.  Inside
 * wss_modtab_enter.  AS-safe. */
int wss_modtab_check(uint64_t lookup, int *memo);
/* In a forked child: no capture or sync of the parent is in flight. */
void wss_modtab_fork_child(void);

#endif
