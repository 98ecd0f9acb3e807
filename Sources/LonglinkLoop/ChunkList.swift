/// The chunks of an `OutboundQueue`, in 8 bytes: none, one chunk held directly, or an array of them.
///
/// A subscriber that keeps up holds one push at a time, so the usual queue needs no array at all: the chunk itself
/// is stored (the push's storage, shared with every other subscriber, gets one more reference). Only a second
/// chunk makes an array, whose capacity is then kept across drains until housekeeping frees it. Before this, the
/// array was made again for the first push after every housekeeping visit: an allocation and a free per push on
/// a connection that hears from its route less often than once a sweep.
struct ChunkList {
    private enum Storage {
        case none
        case one([UInt8])
        case many([[UInt8]])
    }

    private var storage = Storage.none

    /// The number of chunks.
    var count: Int {
        switch storage {
        case .none: 0
        case .one: 1
        case .many(let chunks): chunks.count
        }
    }

    /// Whether an array is allocated (what `releaseStorage` frees).
    var hasArray: Bool {
        if case .many(let chunks) = storage { return chunks.capacity > 0 }
        return false
    }

    /// The bytes of chunk `index` (below `count`).
    @inline(__always)
    func withBytes<R>(of index: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch storage {
        case .none: preconditionFailure("chunk \(index) of an empty list")
        case .one(let chunk):
            precondition(index == 0, "chunk \(index) of 1")
            return chunk.withUnsafeBytes(body)
        case .many(let chunks): return chunks[index].withUnsafeBytes(body)
        }
    }

    /// The size of chunk `index` (below `count`).
    func size(of index: Int) -> Int {
        switch storage {
        case .none: preconditionFailure("chunk \(index) of an empty list")
        case .one(let chunk):
            precondition(index == 0, "chunk \(index) of 1")
            return chunk.count
        case .many(let chunks): return chunks[index].count
        }
    }

    /// Adds `chunk` at the end (held, not copied).
    mutating func append(_ chunk: [UInt8]) {
        switch storage {
        case .none:
            storage = .one(chunk)
        case .one(let first):
            var chunks: [[UInt8]] = []
            chunks.reserveCapacity(4)
            chunks.append(first)
            chunks.append(chunk)
            storage = .many(chunks)
        case .many(var chunks):
            storage = .none
            chunks.append(chunk)
            storage = .many(chunks)
        }
    }

    /// Changes the last chunk in place (unique: a private reply chunk is never shared).
    mutating func modifyLast<R>(_ body: (inout [UInt8]) -> R) -> R {
        switch storage {
        case .none: preconditionFailure("the last chunk of an empty list")
        case .one(var chunk):
            storage = .none
            let result = body(&chunk)
            storage = .one(chunk)
            return result
        case .many(var chunks):
            storage = .none
            let result = body(&chunks[chunks.count - 1])
            storage = .many(chunks)
            return result
        }
    }

    /// Removes and returns the last chunk.
    mutating func popLast() -> [UInt8]? {
        switch storage {
        case .none: return nil
        case .one(let chunk):
            storage = .none
            return chunk
        case .many(var chunks):
            storage = .none
            let last = chunks.popLast()
            storage = .many(chunks)
            return last
        }
    }

    /// Drops every chunk; an array keeps its capacity.
    mutating func removeAllKeepingStorage() {
        switch storage {
        case .none: return
        case .one: storage = .none
        case .many(var chunks):
            storage = .none
            chunks.removeAll(keepingCapacity: true)
            storage = .many(chunks)
        }
    }

    /// Drops the first `count` chunks.
    mutating func removeFirst(_ count: Int) {
        guard count > 0 else { return }
        switch storage {
        case .none: preconditionFailure("removed \(count) chunks of none")
        case .one:
            precondition(count == 1, "removed \(count) chunks of 1")
            storage = .none
        case .many(var chunks):
            storage = .none
            chunks.removeFirst(count)
            storage = .many(chunks)
        }
    }

    /// Drops the chunks from `index` on.
    mutating func removeFrom(_ index: Int) {
        switch storage {
        case .none: return
        case .one: if index == 0 { storage = .none }
        case .many(var chunks):
            guard index < chunks.count else { return }
            storage = .none
            chunks.removeSubrange(index...)
            storage = .many(chunks)
        }
    }

    /// Frees everything, the array included.
    mutating func releaseStorage() {
        storage = .none
    }
}
