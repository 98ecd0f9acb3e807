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
///
/// The per-read and per-frame members (`writeWithUnsafeMutableBytes`, `withReadableBytes`, `moveReaderIndex`,
/// the counts) are `@inlinable`: called from other modules unspecialised, their generic error type made every
/// socket read instantiate `Result` metadata at run time (about 660 instructions per publish).
public struct ByteBuffer: Sendable, Equatable {
    @usableFromInline var storage: [UInt8]
    @usableFromInline var _readerIndex: Int = 0
    @usableFromInline var _writerIndex: Int = 0

    /// Index of the first readable byte.
    @inlinable public var readerIndex: Int { _readerIndex }
    /// Index one past the last readable byte.
    @inlinable public var writerIndex: Int { _writerIndex }

    /// Creates an empty buffer with room for `capacity` bytes before it grows.
    public init(capacity: Int = 0) {
        storage = [UInt8](repeating: 0, count: capacity)
    }

    /// Creates a buffer holding `bytes` as its readable region.
    public init(bytes: some Sequence<UInt8>) {
        storage = Array(bytes)
        _writerIndex = storage.count
    }

    /// Number of bytes between the reader and the writer index.
    @inlinable public var readableBytes: Int { _writerIndex - _readerIndex }
    /// Number of bytes that can be written before the storage grows.
    @inlinable public var writableBytes: Int { storage.count - _writerIndex }
    /// Current storage size.
    @inlinable public var capacity: Int { storage.count }

    /// A copy of the readable bytes (allocates; meant for tests and cold paths).
    public var readableArray: [UInt8] { Array(storage[_readerIndex..<_writerIndex]) }

    /// Makes sure at least `count` bytes can be written without another growth.
    public mutating func reserveWritable(_ count: Int) {
        guard writableBytes < count else { return }
        if _readerIndex > 0 && _readerIndex >= storage.count / 2 {
            discardReadBytes()
            if writableBytes >= count { return }
        }
        var newCapacity = Swift.max(storage.count, 64)
        while newCapacity - _writerIndex < count { newCapacity *= 2 }
        // Copy the live bytes into fresh storage in one memcpy (zero-filling element by element is slow in
        // debug builds and pointless: the writable region is overwritten before it is read).
        let live = _writerIndex
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
        storage[_writerIndex] = byte
        _writerIndex += 1
    }

    /// Appends bytes from a raw buffer.
    public mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        reserveWritable(bytes.count)
        let start = _writerIndex
        storage.withUnsafeMutableBytes { target in
            target.baseAddress!.advanced(by: start).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        }
        _writerIndex += bytes.count
    }

    /// Appends every byte of a collection.
    public mutating func writeBytes(_ bytes: some Collection<UInt8>) {
        reserveWritable(bytes.count)
        for byte in bytes {
            storage[_writerIndex] = byte
            _writerIndex += 1
        }
    }

    /// Appends `value` as a protobuf-style base-128 varint; returns the number of bytes written.
    @discardableResult
    public mutating func writeVarint(_ value: UInt64) -> Int {
        reserveWritable(10)
        var v = value
        var written = 0
        while v >= 0x80 {
            storage[_writerIndex] = UInt8(truncatingIfNeeded: v) | 0x80
            _writerIndex += 1
            written += 1
            v >>= 7
        }
        storage[_writerIndex] = UInt8(v)
        _writerIndex += 1
        return written + 1
    }

    /// Lets `body` write up to `minimumWritableBytes` (or more, if already available) bytes at the writer index.
    /// `body` returns how many bytes it wrote; the writer index moves by that much.
    @inlinable
    @discardableResult
    public mutating func writeWithUnsafeMutableBytes<E: Error>(
        minimumWritableBytes: Int,
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) -> Int {
        reserveWritable(minimumWritableBytes)
        let start = _writerIndex
        let available = storage.count - start
        let written = try storage.withUnsafeMutableBufferPointer { (all) throws(E) -> Int in
            try body(UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: all[start..<(start + available)])))
        }
        precondition(written >= 0 && written <= available, "wrote outside the writable region")
        _writerIndex += written
        return written
    }

    /// Gives `body` the readable bytes without copying.
    @inlinable
    public func withReadableBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let start = _readerIndex
        let end = _writerIndex
        return try storage.withUnsafeBufferPointer { (all) throws(E) -> R in
            try body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: all[start..<end])))
        }
    }

    /// Gives `body` the last `count` readable bytes to rewrite in place; `body` returns how many of them (from
    /// the front) to keep, and the writer index moves back over the rest. A transport that strips its own framing
    /// from the bytes it just read (WebSocket) works this way, without a second buffer.
    public mutating func rewriteReadableTail<E: Error>(
        _ count: Int,
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) {
        precondition(count >= 0 && count <= readableBytes, "rewrote more than the readable bytes")
        let start = _writerIndex - count
        let kept = try storage.withUnsafeMutableBufferPointer { (all) throws(E) -> Int in
            try body(UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: all[start..<(start + count)])))
        }
        precondition(kept >= 0 && kept <= count, "kept more bytes than were given")
        _writerIndex = start + kept
        if _readerIndex == _writerIndex {
            _readerIndex = 0
            _writerIndex = 0
        }
    }

    /// Marks `count` readable bytes as consumed.
    @inlinable
    public mutating func moveReaderIndex(forwardBy count: Int) {
        precondition(count >= 0 && count <= readableBytes, "moved the reader index past the writer index")
        _readerIndex += count
        if _readerIndex == _writerIndex {
            _readerIndex = 0
            _writerIndex = 0
        }
    }

    /// Moves the readable bytes to the front of the storage, reclaiming consumed space.
    public mutating func discardReadBytes() {
        guard _readerIndex > 0 else { return }
        let count = readableBytes
        if count > 0 {
            let from = _readerIndex
            storage.withUnsafeMutableBytes { raw in
                let base = raw.baseAddress!
                base.copyMemory(from: base.advanced(by: from), byteCount: count)
            }
        }
        _readerIndex = 0
        _writerIndex = count
    }

    /// Forgets every byte, keeping the storage for reuse.
    public mutating func clear() {
        _readerIndex = 0
        _writerIndex = 0
    }

    /// Shrinks the storage back to `capacity` when it grew beyond it (after a burst), dropping readable bytes only if asked.
    public mutating func shrink(to capacity: Int) {
        guard storage.count > capacity, readableBytes <= capacity else { return }
        discardReadBytes()
        storage.removeLast(storage.count - capacity)
    }

    public static func == (lhs: ByteBuffer, rhs: ByteBuffer) -> Bool {
        lhs.readableBytes == rhs.readableBytes
            && lhs.storage[lhs._readerIndex..<lhs._writerIndex] == rhs.storage[rhs._readerIndex..<rhs._writerIndex]
    }
}
