// CLonglinkBenchUring: the load generator's io_uring reader on raw system calls (no liburing). Tooling only: the
// LonglinkBench module imports it, the product never does.
//
// Why a shim: the ring is shared memory with the kernel. Its head and tail indexes need acquire loads and release
// stores, the SQE and CQE layouts come from <linux/io_uring.h> (unions Swift imports awkwardly), and the system
// calls have no Glibc wrappers. Swift gets an opaque ring and a few functions that each do one step: open (setup,
// mmap, provided-buffer ring), queue a multishot receive, a poll or a cancel, enter (submit and wait for k
// completions, a minimum wait or a timeout), copy out completions, recycle buffers. Every symbol is prefixed
// `CLonglinkBenchUring_`.
//
// No eventfd: with DEFER_TASKRUN a registered eventfd is written for newly received data only 10-30 ms after it
// arrived (measured on Linux 6.18; the ring's IORING_SQ_TASKRUN flag is set at once, and a thread waiting in the
// ring is woken at once), so the reader sleeps in `enter`, never in an epoll_wait woken by such an eventfd.
#pragma once

#include <stdint.h>

/// One completion as Swift sees it: the request's user data, its result (bytes or -errno) and its flags.
typedef struct CLonglinkBenchUringCompletion {
    uint64_t userData;
    int32_t result;
    uint32_t flags;
} CLonglinkBenchUringCompletion;

/// An open ring (opaque to Swift).
typedef struct CLonglinkBenchUring CLonglinkBenchUring;

/// Opens a ring of `entries` submission slots (a power of two) with SINGLE_ISSUER | DEFER_TASKRUN | TASKRUN_FLAG and
/// registers `bufferCount` (a power of two) provided buffers of `bufferSize` bytes as buffer group 0. On failure
/// returns NULL and sets `*error` to the errno and `*step` to the failing step ("io_uring_setup", "mmap",
/// "register_pbuf_ring", ...).
CLonglinkBenchUring *CLonglinkBenchUring_open(unsigned entries, unsigned bufferCount, unsigned bufferSize, int *error, const char **step);
/// Closes the ring (every request still armed is cancelled by the kernel) and frees its memory.
void CLonglinkBenchUring_close(CLonglinkBenchUring *ring);
/// Whether the kernel honours a minimum wait in `enter` (IORING_FEAT_MIN_TIMEOUT, Linux 6.12).
int CLonglinkBenchUring_hasMinWait(const CLonglinkBenchUring *ring);

/// Queues a multishot receive on `fd` into buffer group 0, tagged `userData`. Returns 0, or -EBUSY when the
/// submission queue is full (enter, then try again).
int CLonglinkBenchUring_queueReceive(CLonglinkBenchUring *ring, int fd, uint64_t userData);
/// Queues a one-shot poll of `fd` for readability, tagged `userData`; its completion's result is the poll mask or
/// -errno. 0 or -EBUSY.
int CLonglinkBenchUring_queuePoll(CLonglinkBenchUring *ring, int fd, uint64_t userData);
/// Queues a cancel of the request tagged `target` (its own completion carries `userData`); the fd may be closed
/// already. 0 or -EBUSY.
int CLonglinkBenchUring_queueCancel(CLonglinkBenchUring *ring, uint64_t target, uint64_t userData);
/// Submissions queued and not yet given to the kernel.
unsigned CLonglinkBenchUring_queued(const CLonglinkBenchUring *ring);
/// Whether the kernel has task work (received data) waiting for the next `enter` (IORING_SQ_TASKRUN), or
/// completions wait in the queue.
int CLonglinkBenchUring_hasTaskWork(const CLonglinkBenchUring *ring);
/// Submits what is queued and, when `minComplete` > 0, waits until that many completions are ready, or until
/// `minWaitMicroseconds` (when > 0 and the kernel has it) passed and at least one is ready, or until
/// `timeoutNanoseconds` passed (with DEFER_TASKRUN the kernel does not wake the thread for fewer); with 0 it only
/// runs the waiting task work (about 20 items per call; the rest keeps IORING_SQ_TASKRUN set). Returns >= 0 (the
/// submissions) or -errno: -ETIME (the wait ended with no completion ready) and -EINTR are not errors.
int CLonglinkBenchUring_enter(CLonglinkBenchUring *ring, unsigned minComplete, unsigned minWaitMicroseconds,
                              int64_t timeoutNanoseconds);
/// Copies up to `capacity` ready completions into `out`, consumes them, and returns how many.
unsigned CLonglinkBenchUring_reap(CLonglinkBenchUring *ring, CLonglinkBenchUringCompletion *out, unsigned capacity);
/// The provided buffer `bufferID` (from a completion's flags >> 16).
const void *CLonglinkBenchUring_buffer(const CLonglinkBenchUring *ring, unsigned bufferID);
/// Gives buffer `bufferID` back to the kernel; visible to it after `publishBuffers`.
void CLonglinkBenchUring_recycle(CLonglinkBenchUring *ring, unsigned bufferID);
/// Publishes the recycled buffers (one release store of the buffer ring's tail).
void CLonglinkBenchUring_publishBuffers(CLonglinkBenchUring *ring);

/// IORING_CQE_F_BUFFER, IORING_CQE_F_MORE and IORING_CQE_BUFFER_SHIFT (macros and an enum Swift cannot import
/// as the integer types it compares with).
static inline uint32_t CLonglinkBenchUring_completionHasBuffer(void) { return 1U << 0; }
static inline uint32_t CLonglinkBenchUring_completionHasMore(void) { return 1U << 1; }
static inline uint32_t CLonglinkBenchUring_bufferShift(void) { return 16; }
