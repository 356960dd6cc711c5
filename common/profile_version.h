/* The profile format's version, shared by the writer (common/profile.c,
 * for `wss run` and `wss attach`) and the reader (cli/model/load_header.c) so
 * that they cannot disagree; raise it when a change to
 * docs/profile-format.md would mislead an older reader. */
#ifndef WSS_COMMON_PROFILE_VERSION_H
#define WSS_COMMON_PROFILE_VERSION_H

#define WSS_PROFILE_VERSION 1

#endif
