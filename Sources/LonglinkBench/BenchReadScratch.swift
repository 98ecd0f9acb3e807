import LonglinkLoop

/// One receive buffer per load-generator loop, shared by every benchmark connection on it (reads never overlap on
/// one thread): a connection reads into it, handles the whole frames in place and keeps only an incomplete last
/// frame's bytes for the next read. So an idle connection holds no receive buffer, a read is one `read` into memory
/// that stays in the cache, and nothing is zero-filled or grown per read.
final class BenchReadScratch {
    /// The buffer.
    private(set) var bytes: UnsafeMutableRawBufferPointer

    private init(capacity: Int) { bytes = .allocate(byteCount: capacity, alignment: 16) }
    deinit { bytes.deallocate() }

    /// Makes room for at least `count` bytes (a frame larger than the buffer; rare), keeping none of the contents.
    func reserve(_ count: Int) {
        guard count > bytes.count else { return }
        var capacity = bytes.count
        while capacity < count { capacity *= 2 }
        bytes.deallocate()
        bytes = .allocate(byteCount: capacity, alignment: 16)
    }

    /// `kept` (an incomplete frame from the last receive) followed by `bytes`, joined at the start of the buffer
    /// (grown if need be): the frame whole again, with whatever followed it.
    func join(_ kept: [UInt8], _ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let total = kept.count + bytes.count
        reserve(total)
        let base = self.bytes.baseAddress!
        kept.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: kept.count) }
        (base + kept.count).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        return UnsafeRawBufferPointer(start: base, count: total)
    }

    /// The scratch of `context`'s loop, created on first use.
    static func of(_ context: LoopContext) -> BenchReadScratch {
        if let scratch = context.attachment(BenchReadScratch.self) { return scratch }
        let scratch = BenchReadScratch(capacity: 256 * 1024)
        context.attach(scratch)
        return scratch
    }
}

@available(*, unavailable)
extension BenchReadScratch: Sendable {}
