#include "CLonglinkProto.h"

#include <malloc.h>
#include <stdalign.h>
#include <stdlib.h>

// Every block allocation is aligned like malloc's, so any protobuf-c struct may live there.
#define ARENA_ALIGNMENT alignof(max_align_t)

static void *arena_alloc(void *data, size_t size) {
    CLonglinkProto_Arena *arena = data;
    // A zero-byte request still gets a distinct pointer inside the block (never one past its end, which
    // arena_free would take for a malloc'd pointer).
    if (size == 0) size = 1;
    uintptr_t base = (uintptr_t)arena->block;
    uintptr_t start = (base + arena->used + (ARENA_ALIGNMENT - 1)) & ~(uintptr_t)(ARENA_ALIGNMENT - 1);
    size_t offset = (size_t)(start - base);
    if (size <= arena->capacity && offset <= arena->capacity - size) {
        arena->used = offset + size;
        arena->blockAllocations += 1;
        return (void *)start;
    }
    arena->fallbackAllocations += 1;
    return malloc(size);
}

static void arena_free(void *data, void *pointer) {
    CLonglinkProto_Arena *arena = data;
    unsigned char *p = pointer;
    if (p >= arena->block && p < arena->block + arena->capacity) return;  // reclaimed by the reset
    free(pointer);
}

void CLonglinkProto_arena_init(CLonglinkProto_Arena *arena, void *block, size_t capacity) {
    arena->allocator.alloc = arena_alloc;
    arena->allocator.free = arena_free;
    arena->allocator.allocator_data = arena;
    arena->block = block;
    arena->capacity = block == NULL ? 0 : capacity;
    CLonglinkProto_arena_reset(arena);
}

void CLonglinkProto_arena_reset(CLonglinkProto_Arena *arena) {
    arena->used = 0;
    arena->blockAllocations = 0;
    arena->fallbackAllocations = 0;
}

size_t CLonglinkProto_server_frame_packed_size(const Longlink__V1__ServerFrame *frame) {
    return longlink__v1__server_frame__get_packed_size(frame);
}

size_t CLonglinkProto_client_frame_packed_size(const Longlink__V1__ClientFrame *frame) {
    return longlink__v1__client_frame__get_packed_size(frame);
}

size_t CLonglinkProto_server_frame_pack(const Longlink__V1__ServerFrame *frame, uint8_t *out, size_t capacity,
                                        size_t packed_size) {
    if (out == NULL || packed_size > capacity) return 0;
    return longlink__v1__server_frame__pack(frame, out);
}

size_t CLonglinkProto_client_frame_pack(const Longlink__V1__ClientFrame *frame, uint8_t *out, size_t capacity,
                                        size_t packed_size) {
    if (out == NULL || packed_size > capacity) return 0;
    return longlink__v1__client_frame__pack(frame, out);
}

Longlink__V1__ServerFrame *CLonglinkProto_server_frame_unpack(CLonglinkProto_Arena *arena, const uint8_t *data,
                                                              size_t length, size_t limit) {
    if (length > limit) return NULL;
    return longlink__v1__server_frame__unpack(&arena->allocator, length, data);
}

Longlink__V1__ClientFrame *CLonglinkProto_client_frame_unpack(CLonglinkProto_Arena *arena, const uint8_t *data,
                                                              size_t length, size_t limit) {
    if (length > limit) return NULL;
    return longlink__v1__client_frame__unpack(&arena->allocator, length, data);
}

void CLonglinkProto_server_frame_free(Longlink__V1__ServerFrame *frame, CLonglinkProto_Arena *arena) {
    // Walking the message only matters for allocations that went to malloc; block ones go with the reset.
    if (frame != NULL && arena->fallbackAllocations > 0) {
        longlink__v1__server_frame__free_unpacked(frame, &arena->allocator);
    }
    CLonglinkProto_arena_reset(arena);
}

void CLonglinkProto_client_frame_free(Longlink__V1__ClientFrame *frame, CLonglinkProto_Arena *arena) {
    if (frame != NULL && arena->fallbackAllocations > 0) {
        longlink__v1__client_frame__free_unpacked(frame, &arena->allocator);
    }
    CLonglinkProto_arena_reset(arena);
}

size_t CLonglinkProto_heap_bytes_in_use(void) {
    return mallinfo2().uordblks;
}
