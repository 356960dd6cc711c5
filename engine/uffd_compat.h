/* The userfaultfd and PAGEMAP_SCAN interface of Linux 6.7 (async
 * write-protect, WP_UNPOPULATED, PAGEMAP_SCAN), for C library headers that
 * predate it (Debian 12 ships 6.1's).  Used only for what configure did not
 * find; the values are the kernel's ABI (include/uapi/linux/userfaultfd.h
 * and fs.h), so a binary built with them runs on any kernel that has the
 * features, and the probe (track_uffd.c) finds out at run time whether this
 * one does. */
#ifndef WSS_ENGINE_UFFD_COMPAT_H
#define WSS_ENGINE_UFFD_COMPAT_H

#include <linux/fs.h>
#include <linux/types.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#if !HAVE_DECL_SYS_USERFAULTFD
#define SYS_userfaultfd 323 /* x86-64 */
#endif
#if !HAVE_DECL_UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#if !HAVE_DECL_UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1ULL << 13)
#endif
#if !HAVE_DECL_UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1ULL << 15)
#endif

#if !HAVE_DECL_PAGEMAP_SCAN
struct page_region {
	__u64 start, end;  /* [start, end) */
	__u64 categories;  /* PAGE_IS_* of the region */
};

struct pm_scan_arg {
	__u64 size;        /* sizeof(struct pm_scan_arg) */
	__u64 flags;       /* PM_SCAN_* */
	__u64 start, end;  /* the range to walk */
	__u64 walk_end;    /* out: where the walk stopped */
	__u64 vec;         /* struct page_region[vec_len] */
	__u64 vec_len;
	__u64 max_pages;   /* 0: no limit */
	__u64 category_inverted, category_mask, category_anyof_mask, return_mask;
};

#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif
#if !HAVE_DECL_PM_SCAN_WP_MATCHING
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
#endif
#if !HAVE_DECL_PAGE_IS_WRITTEN
#define PAGE_IS_WPALLOWED (1 << 0)
#define PAGE_IS_WRITTEN (1 << 1)
#define PAGE_IS_FILE (1 << 2)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_SWAPPED (1 << 4)
#define PAGE_IS_PFNZERO (1 << 5)
#endif
#ifndef PAGE_IS_HUGE
#define PAGE_IS_HUGE (1 << 6) /* mapped by a huge page (6.7, with the others) */
#endif

#endif
