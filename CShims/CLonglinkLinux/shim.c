// Wrappers for the GNU-only calls declared in CLonglinkLinux.h. This file is compiled with _GNU_SOURCE, which is
// why it can see them while Swift's Glibc module cannot.
#include "CLonglinkLinux.h"

#if defined(__linux__)

#include <pthread.h>
#include <sys/syscall.h>

int CLonglinkLinux_accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags) {
    return accept4(sockfd, addr, addrlen, flags);
}

int CLonglinkLinux_setThreadName(const char *name) {
    // Linux limits thread names to 15 bytes plus the terminator; longer names fail with ERANGE.
    char truncated[16];
    size_t i = 0;
    for (; i < sizeof(truncated) - 1 && name[i] != '\0'; i++) truncated[i] = name[i];
    truncated[i] = '\0';
    return pthread_setname_np(pthread_self(), truncated);
}

int CLonglinkLinux_gettid(void) {
    return (int)gettid();
}

int CLonglinkLinux_tgkill(int tid, int sig) {
    return (int)syscall(SYS_tgkill, getpid(), tid, sig);
}

#endif // defined(__linux__)
