import Glibc
import LonglinkLoop
import LonglinkTestSupport
import Testing

/// Every plain TCP connection holds one `PlainTransport`: its malloc block is part of the idle memory per
/// connection, a budget (issue 19).
@Suite("PlainTransport layout", .ownThreads)
struct PlainTransportLayoutTests {
    @Test("a plain transport is one 48-byte malloc block (40 usable bytes)")
    func objectSize() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        let transport = PlainTransport(fd: fd)
        defer { transport.close() }
        // glibc's `malloc_usable_size` (malloc.h is not in the Glibc module), looked up in the process (RTLD_DEFAULT).
        typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
        let usableSize = unsafeBitCast(try #require(dlsym(nil, "malloc_usable_size")), to: UsableSize.self)
        let usable = withExtendedLifetime(transport) { usableSize(Unmanaged.passUnretained(transport).toOpaque()) }
        #expect(usable <= 40)
    }
}
