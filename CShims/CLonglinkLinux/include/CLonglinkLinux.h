// CLonglinkLinux: the Linux system calls LonglinkLoop needs that `import Glibc` does not show to Swift.
//
// Why a shim at all: Swift's Glibc module (and Swift's view of this header) is built without _GNU_SOURCE, so GNU-only declarations (accept4,
// pipe2, pthread_setname_np, ...) are invisible, and <sys/epoll.h>, <sys/eventfd.h>, <sys/timerfd.h> and
// <sys/signalfd.h> are not part of it. This target is compiled with _GNU_SOURCE (see Package.swift), so the
// wrappers in shim.c can call the GNU functions. Every symbol is prefixed `CLonglinkLinux_` and says why it exists.
// Constants are `static inline` functions because C macros (and enum-typed macros) do not import as plain
// integers of the type the syscall takes.
#pragma once

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

// Everything below is Linux only, and only the Swift files in Sources/LonglinkLoop/Linux/ use it; off Linux (a
// Darwin build of the client with the poll backend) the header is just the portable includes above.
#if defined(__linux__)

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

// MARK: Layouts LonglinkLoop relies on.

// Swift reads `epoll_event.data.u64` and fills arrays of them for epoll_wait; on x86-64 the kernel ABI packs the
// struct to 12 bytes, and Swift must see the same size or the array stride would be wrong.
#if defined(__x86_64__)
_Static_assert(sizeof(struct epoll_event) == 12, "epoll_event must be packed (12 bytes) on x86-64");
#endif
// The 64-bit user data carries a 32-bit registration generation and a 32-bit fd.
_Static_assert(sizeof(((struct epoll_event *)0)->data.u64) == 8, "epoll_data.u64 must be 64 bits");
_Static_assert(sizeof(int) == 4, "file descriptors must fit in the low 32 bits of epoll_data.u64");
// signalfd reads return whole records of exactly this size.
_Static_assert(sizeof(struct signalfd_siginfo) == 128, "signalfd_siginfo is 128 bytes");
// OutboundQueue builds iovec arrays on the stack: two words each.
_Static_assert(sizeof(struct iovec) == 16, "iovec is pointer + length");

// MARK: epoll flags (enum-typed macros in <sys/epoll.h>; Swift sees them as EPOLL_EVENTS, not uint32_t).

static inline uint32_t CLonglinkLinux_EPOLLIN(void) { return EPOLLIN; }
static inline uint32_t CLonglinkLinux_EPOLLOUT(void) { return EPOLLOUT; }
static inline uint32_t CLonglinkLinux_EPOLLERR(void) { return EPOLLERR; }
static inline uint32_t CLonglinkLinux_EPOLLHUP(void) { return EPOLLHUP; }
static inline uint32_t CLonglinkLinux_EPOLLRDHUP(void) { return EPOLLRDHUP; }
static inline int CLonglinkLinux_EPOLL_CLOEXEC(void) { return EPOLL_CLOEXEC; }

// MARK: eventfd / timerfd / signalfd flags (anonymous-enum macros; imported with the wrong type or not at all).

static inline int CLonglinkLinux_EFD_NONBLOCK_CLOEXEC(void) { return EFD_NONBLOCK | EFD_CLOEXEC; }
static inline int CLonglinkLinux_TFD_NONBLOCK_CLOEXEC(void) { return TFD_NONBLOCK | TFD_CLOEXEC; }
static inline int CLonglinkLinux_TFD_TIMER_ABSTIME(void) { return TFD_TIMER_ABSTIME; }
static inline int CLonglinkLinux_SFD_NONBLOCK_CLOEXEC(void) { return SFD_NONBLOCK | SFD_CLOEXEC; }

// MARK: socket flags (SOCK_NONBLOCK/SOCK_CLOEXEC are enum __socket_type members; the OR is an int).

static inline int CLonglinkLinux_SOCK_STREAM_NONBLOCK_CLOEXEC(void) { return SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC; }
static inline int CLonglinkLinux_SOCK_NONBLOCK_CLOEXEC(void) { return SOCK_NONBLOCK | SOCK_CLOEXEC; }

// MARK: GNU-only functions (hidden from Swift's Glibc module, which is built without _GNU_SOURCE).

/// accept4 is a GNU extension: accepts with SOCK_NONBLOCK|SOCK_CLOEXEC in one call (no fcntl race).
int CLonglinkLinux_accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);
/// pthread_setname_np is a GNU extension: names loop threads `longlink-loop-N` for top/gdb/perf.
int CLonglinkLinux_setThreadName(const char *name);
/// gettid() needs _GNU_SOURCE; used only in diagnostics and tests (thread-directed signals).
int CLonglinkLinux_gettid(void);
/// tgkill has no glibc prototype visible to Swift (and `syscall` is variadic, which Swift cannot call):
/// sends `sig` to one thread of this process.
int CLonglinkLinux_tgkill(int tid, int sig);

// MARK: Small helpers over structures Swift handles awkwardly.

/// Reads `ssi_signo` from a signalfd record (keeps Swift from depending on the struct's field order).
static inline uint32_t CLonglinkLinux_signalfd_signo(const struct signalfd_siginfo *info) { return info->ssi_signo; }

// MARK: Send ring (io_uring, raw system calls: Debian 12 has no liburing to link).

/// One io_uring used for one job: the loop's before-sleep flush queues one non-blocking send per connection
/// (`MSG_DONTWAIT | MSG_NOSIGNAL`: a full socket answers -EAGAIN, it is never waited on in the background) and
/// submits them all with one `io_uring_enter`, which returns once every send has its result. Owned by one thread.
typedef struct CLonglinkLinux_SendRing CLonglinkLinux_SendRing;
/// A ring of `entries` sends (rounded up to a power of two by the kernel), or NULL with `*error` set (ENOSYS when
/// the kernel lacks io_uring or a feature it needs; EPERM when io_uring is disabled for this process).
CLonglinkLinux_SendRing *CLonglinkLinux_sendRingCreate(unsigned entries, int *error);
/// Closes the ring and frees it.
void CLonglinkLinux_sendRingDestroy(CLonglinkLinux_SendRing *ring);
/// The most sends one submission takes.
unsigned CLonglinkLinux_sendRingCapacity(const CLonglinkLinux_SendRing *ring);
/// Sends queued since the last submission.
unsigned CLonglinkLinux_sendRingQueued(const CLonglinkLinux_SendRing *ring);
/// Queues a send of `length` bytes at `bytes` to `fd`: its index in the next submission's results, or -1 when the
/// ring is full. The bytes must stay in place until `CLonglinkLinux_sendRingSubmit` returns.
int CLonglinkLinux_sendRingQueue(CLonglinkLinux_SendRing *ring, int fd, const void *bytes, unsigned length);
/// Submits the queued sends and waits for all of them: `results[i]` is send i's byte count or -errno. Returns the
/// number of sends, or -errno when the ring itself failed (then the sends without a result read -ECANCELED: how
/// much of them left is unknown).
int CLonglinkLinux_sendRingSubmit(CLonglinkLinux_SendRing *ring, int32_t *results);

#endif // defined(__linux__)
