// See include/CCurlBaseline.h.
#ifdef __linux__
#define _GNU_SOURCE
#include "CCurlBaseline.h"

#include <dirent.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>

/// Where Debian's libcurl (and so Linux URLSession) reads the authorities it trusts.
static const char *const system_bundle = "/etc/ssl/certs/ca-certificates.crt";

/// Set once this process's mounts are its own: a bind mount is then seen by no other process.
static int mounts_are_private = 0;

static int thread_count(void) {
    DIR *tasks = opendir("/proc/self/task");
    if (tasks == NULL) return -1;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) {
        if (entry->d_name[0] != '.') count += 1;
    }
    closedir(tasks);
    return count;
}

int courier_baseline_private_mounts(void) {
    if (mounts_are_private) return 0;
    if (thread_count() != 1) return -1;
    if (unshare(CLONE_NEWNS) != 0) return -1;
    // Without this, mounts made here would still reach the namespace this one was copied from.
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -1;
    mounts_are_private = 1;
    return 0;
}

int courier_baseline_trust_only(const char *authorities) {
    if (!mounts_are_private || authorities == NULL) return -1;
    return mount(authorities, system_bundle, NULL, MS_BIND, NULL) == 0 ? 0 : -1;
}
#endif
