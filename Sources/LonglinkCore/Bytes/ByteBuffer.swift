/// A growable byte buffer with a reader and a writer index, the one buffer type of the hot path.
///
///     +-------------------+------------------+------------------+
///     | discardable bytes |  readable bytes  |  writable bytes  |
///     +-------------------+------------------+------------------+
///     0            readerIndex         writerIndex          capacity
///
/// The event loop reads from sockets straight into the writable region (`writeWithUnsafeMutableBytes`),
/// the frame reader consumes from the readable region, and `discardReadBytes()` compacts. Storage is a
/// plain `[UInt8]` whose count is the capacity, so growth is amortised and nothing here touches Foundation.
public struct ByteBuffer: Sendable, Equatable {
    var storage: [UInt8]
    /// Index of the first readable byte.
    public private(set) var readerIndex: Int = 0
    /// Index one past the last readable byte.
    public private(set) var writerIndex: Int = 0

    /// Creates an empty buffer with room for `capacity` bytes before it grows.
    public init(capacity: Int = 0) {
        storage = [UInt8](repeating: 0, count: capacity)
    }

    /// Creates a buffer holding `bytes` as its readable region.
    public init(bytes: some Sequence<UInt8>) {
        storage = Array(bytes)
        writerIndex = storage.count
    }

    /// Number of bytes between the reader and the writer index.
    public var readableBytes: Int { writerIndex - readerIndex }
    /// Number of bytes that can be written before the storage grows.
    public var writableBytes: Int { storage.count - writerIndex }
    /// Current storage size.
    public var capacity: Int { storage.count }

    /// A copy of the readable bytes (allocates; meant for tests and cold paths).
    public var readableArray: [UInt8] { Array(storage[readerIndex..<writerIndex]) }

    /// Makes sure at least `count` bytes can be written without another growth.
    public mutating func reserveWritable(_ count: Int) {
        guard writableBytes < count else { return }
        if readerIndex > 0 && readerIndex >= storage.count / 2 {
            discardReadBytes()
            if writableBytes >= count { return }
        }
        var newCapacity = Swift.max(storage.count, 64)
        while newCapacity - writerIndex < count { newCapacity *= 2 }
        // Copy the live bytes into fresh storage in one memcpy (zero-filling element by element is slow in
        // debug builds and pointless: the writable region is overwritten before it is read).
        let live = writerIndex
        let grown = [UInt8](unsafeUninitializedCapacity: newCapacity) { target, initialized in
            storage.withUnsafeBytes { source in
                if live > 0 { target.baseAddress!.update(from: source.bindMemory(to: UInt8.self).baseAddress!, count: live) }
            }
            (target.baseAddress! + live).initialize(repeating: 0, count: newCapacity - live)
            initialized = newCapacity
        }
        storage = grown
    }

    /// Appends one byte.
    public mutating func writeByte(_ byte: UInt8) {
        reserveWritable(1)
        storage[writerIndex] = byte
        writerIndex += 1
    }

    /// Appends bytes from a raw buffer.
    public mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        reserveWritable(bytes.count)
        let start = writerIndex
        storage.withUnsafeMutableBytes { target in
            target.baseAddress!.advanced(by: start).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        }
        writerIndex += bytes.count
    }

    /// Appends every byte of a collection.
    public mutating func writeBytes(_ bytes: some Collection<UInt8>) {
        reserveWritable(bytes.count)
        for byte in bytes {
            storage[writerIndex] = byte
            writerIndex += 1
        }
    }

    /// Appends `value` as a protobuf-style base-128 varint; returns the number of bytes written.
    @discardableResult
    public mutating func writeVarint(_ value: UInt64) -> Int {
        reserveWritable(10)
        var v = value
        var written = 0
        while v >= 0x80 {
            storage[writerIndex] = UInt8(truncatingIfNeeded: v) | 0x80
            writerIndex += 1
            written += 1
            v >>= 7
        }
        storage[writerIndex] = UInt8(v)
        writerIndex += 1
        return written + 1
    }

    /// Lets `body` write up to `minimumWritableBytes` (or more, if already available) bytes at the writer index.
    /// `body` returns how many bytes it wrote; the writer index moves by that much.
    @discardableResult
    public mutating func writeWithUnsafeMutableBytes<E: Error>(
        minimumWritableBytes: Int,
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) -> Int {
        reserveWritable(minimumWritableBytes)
        let start = writerIndex
        let available = storage.count - start
        let result: Result<Int, E> = storage.withUnsafeMutableBytes { raw in
            do throws(E) {
                return .success(try body(UnsafeMutableRawBufferPointer(rebasing: raw[start..<(start + available)])))
            } catch {
                return .failure(error)
            }
        }
        let written = try result.get()
        precondition(written >= 0 && written <= available, "wrote outside the writable region")
        writerIndex += written
        return written
    }

    /// Gives `body` the readable bytes without copying.

    public func withReadableBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let start = readerIndex
        let end = writerIndex
        let result: Result<R, E> = storage.withUnsafeBytes { raw in
            do throws(E) {
                return .success(try body(UnsafeRawBufferPointer(rebasing: raw[start..<end])))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Gives `body` the last `count` readable bytes to rewrite in place; `body` returns how many of them (from
    /// the front) to keep, and the writer index moves back over the rest. A transport that strips its own framing
    /// from the bytes it just read (WebSocket) works this way, without a second buffer.
    public mutating func rewriteReadableTail<E: Error>(
        _ count: Int,
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) {
        precondition(count >= 0 && count <= readableBytes, "rewrote more than the readable bytes")
        let start = writerIndex - count
        let result: Result<Int, E> = storage.withUnsafeMutableBytes { raw in
            do throws(E) {
                return .success(try body(UnsafeMutableRawBufferPointer(rebasing: raw[start..<(start + count)])))
            } catch {
                return .failure(error)
            }
        }
        let kept = try result.get()
        precondition(kept >= 0 && kept <= count, "kept more bytes than were given")
        writerIndex = start + kept
        if readerIndex == writerIndex {
            readerIndex = 0
            writerIndex = 0
        }
    }

    /// Marks `count` readable bytes as consumed.
    public mutating func moveReaderIndex(forwardBy count: Int) {
        precondition(count >= 0 && count <= readableBytes, "moved the reader index past the writer index")
        readerIndex += count
        if readerIndex == writerIndex {
            readerIndex = 0
            writerIndex = 0
        }
    }

    /// Moves the readable bytes to the front of the storage, reclaiming consumed space.
    public mutating func discardReadBytes() {
        guard readerIndex > 0 else { return }
        let count = readableBytes
        if count > 0 {
            let from = readerIndex
            storage.withUnsafeMutableBytes { raw in
                let base = raw.baseAddress!
                base.copyMemory(from: base.advanced(by: from), byteCount: count)
            }
        }
        readerIndex = 0
        writerIndex = count
    }

    /// Forgets every byte, keeping the storage for reuse.
    public mutating func clear() {
        readerIndex = 0
        writerIndex = 0
    }

    /// Shrinks the storage back to `capacity` when it grew beyond it (after a burst), dropping readable bytes only if asked.
    public mutating func shrink(to capacity: Int) {
        guard storage.count > capacity, readableBytes <= capacity else { return }
        discardReadBytes()
        storage.removeLast(storage.count - capacity)
    }

    public static func == (lhs: ByteBuffer, rhs: ByteBuffer) -> Bool {
        lhs.readableBytes == rhs.readableBytes
            && lhs.storage[lhs.readerIndex..<lhs.writerIndex] == rhs.storage[rhs.readerIndex..<rhs.writerIndex]
    }
}
