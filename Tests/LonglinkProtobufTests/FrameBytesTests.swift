import Testing

@testable import LonglinkProtobuf
import LonglinkTestSupport

@Suite("FrameBytes", .ownThreads)
struct FrameBytesTests {
    /// The same bytes, count and capacity rule as the standard library's initializer, on both sides of the stack limit.
    @Test("builds the same array as [UInt8](unsafeUninitializedCapacity:), below, at and above the stack limit")
    func sameAsStandardLibrary() {
        for capacity in [0, 1, 43, FrameBytes.stackLimit, FrameBytes.stackLimit + 1, 70_000] {
            for written in Set([0, capacity / 2, capacity]) {
                let fill: (inout UnsafeMutableBufferPointer<UInt8>, inout Int) -> Void = { out, initialized in
                    for index in 0..<written { out[index] = UInt8(truncatingIfNeeded: index &* 31 &+ capacity) }
                    initialized = written
                }
                let expected = [UInt8](unsafeUninitializedCapacity: capacity, initializingWith: fill)
                let built = FrameBytes.array(capacity: capacity, initializingWith: fill)
                #expect(built == expected, "capacity \(capacity), written \(written)")
                #expect(built.count == written)
            }
        }
    }
}
