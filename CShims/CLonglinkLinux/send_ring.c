// A send ring: one io_uring used for a single job, many non-blocking sends (one per connection) submitted with
// one io_uring_enter, every result collected before the call returns. See CLonglinkLinux.h.
#include "CLonglinkLinux.h"

#if defined(__linux__)

#include <linux/io_uring.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

_Static_assert(sizeof(struct io_uring_sqe) == 64, "an SQE is 64 bytes");
_Static_assert(sizeof(struct io_uring_cqe) == 16, "a CQE is 16 bytes (no CQE32)");

struct CLonglinkLinux_SendRing {
    int fd;
    unsigned entries;    // SQ entries: the most sends one submission takes
    unsigned queued;     // sends written into SQEs since the last submission
    unsigned *sqTail, *sqArray;
    unsigned sqMask;
    unsigned sqLocalTail;
    struct io_uring_sqe *sqes;
    unsigned *cqHead, *cqTail;
    unsigned cqMask;
    struct io_uring_cqe *cqes;
    void *ringMemory;
    size_t ringSize;
    size_t sqesSize;
};

static void destroy(CLonglinkLinux_SendRing *ring) {
    if (ring->sqes != NULL && ring->sqes != MAP_FAILED) munmap(ring->sqes, ring->sqesSize);
    if (ring->ringMemory != NULL && ring->ringMemory != MAP_FAILED) munmap(ring->ringMemory, ring->ringSize);
    if (ring->fd >= 0) close(ring->fd);
    free(ring);
}

CLonglinkLinux_SendRing *CLonglinkLinux_sendRingCreate(unsigned entries, int *error) {
    CLonglinkLinux_SendRing *ring = calloc(1, sizeof(*ring));
    if (ring == NULL) {
        *error = ENOMEM;
        return NULL;
    }
    ring->fd = -1;
    struct io_uring_params params;
    memset(&params, 0, sizeof(params));
    ring->fd = (int)syscall(__NR_io_uring_setup, entries, &params);
    if (ring->fd < 0) {
        *error = errno;
        destroy(ring);
        return NULL;
    }
    // One mapping for both rings (every kernel since 5.4); without it the ring is refused, not worked around.
    if (!(params.features & IORING_FEAT_SINGLE_MMAP)) {
        *error = ENOSYS;
        destroy(ring);
        return NULL;
    }
    size_t sqSize = params.sq_off.array + params.sq_entries * sizeof(unsigned);
    size_t cqSize = params.cq_off.cqes + params.cq_entries * sizeof(struct io_uring_cqe);
    ring->ringSize = sqSize > cqSize ? sqSize : cqSize;
    ring->ringMemory = mmap(NULL, ring->ringSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring->fd,
                            IORING_OFF_SQ_RING);
    if (ring->ringMemory == MAP_FAILED) {
        *error = errno;
        destroy(ring);
        return NULL;
    }
    ring->sqesSize = params.sq_entries * sizeof(struct io_uring_sqe);
    ring->sqes = mmap(NULL, ring->sqesSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring->fd,
                      IORING_OFF_SQES);
    if (ring->sqes == MAP_FAILED) {
        *error = errno;
        destroy(ring);
        return NULL;
    }
    char *base = ring->ringMemory;
    ring->entries = params.sq_entries;
    ring->sqTail = (unsigned *)(base + params.sq_off.tail);
    ring->sqArray = (unsigned *)(base + params.sq_off.array);
    ring->sqMask = *(unsigned *)(base + params.sq_off.ring_mask);
    ring->sqLocalTail = *ring->sqTail;
    ring->cqHead = (unsigned *)(base + params.cq_off.head);
    ring->cqTail = (unsigned *)(base + params.cq_off.tail);
    ring->cqMask = *(unsigned *)(base + params.cq_off.ring_mask);
    ring->cqes = (struct io_uring_cqe *)(base + params.cq_off.cqes);
    // The SQ array maps ring slot i to SQE i, once: sends are written straight into the SQE of their slot.
    for (unsigned i = 0; i < params.sq_entries; i++) ring->sqArray[i] = i;
    // A completion queue at least as long as the submission queue (the kernel makes it twice as long): a
    // submission of `entries` sends cannot overflow it.
    if (params.cq_entries < params.sq_entries) {
        *error = ENOSYS;
        destroy(ring);
        return NULL;
    }
    return ring;
}

void CLonglinkLinux_sendRingDestroy(CLonglinkLinux_SendRing *ring) {
    if (ring != NULL) destroy(ring);
}

unsigned CLonglinkLinux_sendRingCapacity(const CLonglinkLinux_SendRing *ring) { return ring->entries; }

unsigned CLonglinkLinux_sendRingQueued(const CLonglinkLinux_SendRing *ring) { return ring->queued; }

int CLonglinkLinux_sendRingQueue(CLonglinkLinux_SendRing *ring, int fd, const void *bytes, unsigned length) {
    if (ring->queued == ring->entries) return -1;
    unsigned slot = ring->sqLocalTail & ring->sqMask;
    struct io_uring_sqe *sqe = &ring->sqes[slot];
    memset(sqe, 0, sizeof(*sqe));
    sqe->opcode = IORING_OP_SEND;
    sqe->fd = fd;
    sqe->addr = (uint64_t)(uintptr_t)bytes;
    sqe->len = length;
    // MSG_DONTWAIT makes the kernel answer -EAGAIN for a full socket instead of waiting for room in the
    // background: every send completes during the submission, so the bytes it points at can be reused after it.
    sqe->msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL;
    sqe->user_data = ring->queued;
    ring->sqLocalTail++;
    return (int)ring->queued++;
}

int CLonglinkLinux_sendRingSubmit(CLonglinkLinux_SendRing *ring, int32_t *results) {
    unsigned total = ring->queued;
    if (total == 0) return 0;
    ring->queued = 0;
    // A send whose result never arrives (the ring failed) reads as cancelled: its caller cannot know how much of it
    // left, so it closes that connection rather than send the bytes again.
    for (unsigned i = 0; i < total; i++) results[i] = -ECANCELED;
    __atomic_store_n(ring->sqTail, ring->sqLocalTail, __ATOMIC_RELEASE);
    unsigned submitted = 0, completed = 0, retries = 0;
    while (completed < total) {
        int entered = (int)syscall(__NR_io_uring_enter, ring->fd, total - submitted, total - completed,
                                   IORING_ENTER_GETEVENTS, NULL, 0);
        if (entered < 0) {
            int code = errno;
            // EINTR: a signal during the wait (the submitted sends still complete); EAGAIN/EBUSY: the kernel had
            // no room for request state just now. Both are retried, a bounded number of times; anything else
            // means the ring itself is broken.
            if ((code != EINTR && code != EAGAIN && code != EBUSY) || ++retries > 1000) return -code;
        } else {
            submitted += (unsigned)entered;
        }
        unsigned head = *ring->cqHead;
        unsigned tail = __atomic_load_n(ring->cqTail, __ATOMIC_ACQUIRE);
        for (; head != tail; head++) {
            struct io_uring_cqe *cqe = &ring->cqes[head & ring->cqMask];
            if (cqe->user_data < total) results[cqe->user_data] = cqe->res;
            completed++;
        }
        __atomic_store_n(ring->cqHead, head, __ATOMIC_RELEASE);
    }
    return (int)completed;
}

#endif // defined(__linux__)
