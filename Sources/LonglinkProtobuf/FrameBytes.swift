/// Encoded frames as byte arrays, without the standard library's unspecialised allocation path.
///
/// `[UInt8](unsafeUninitializedCapacity:initializingWith:)` allocates through `Array._allocateBufferUninitialized`,
/// which the standard library does not inline: it runs generic, and looks up `_ContiguousArrayStorage<UInt8>`'s
/// metadata through `swift_getCanonicalPrespecializedGenericMetadata` on every call (about 325 instructions per
/// array, twice per publish: the push and the publish result). `Array(UnsafeBufferPointer)` is specialised in the
/// caller and names that metadata directly, so a frame up to `stackLimit` bytes is written into stack scratch
/// and copied into its array (a short memcpy); larger frames keep the standard library's path.
enum FrameBytes {
    /// The largest frame written into stack scratch first.
    static let stackLimit = 1024

    /// A drop-in for `[UInt8](unsafeUninitializedCapacity: capacity, initializingWith: body)`.
    @inline(__always)
    static func array(
        capacity: Int,
        initializingWith body: (inout UnsafeMutableBufferPointer<UInt8>, inout Int) -> Void
    ) -> [UInt8] {
        guard capacity <= stackLimit else {
            return [UInt8](unsafeUninitializedCapacity: capacity, initializingWith: body)
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { scratch in
            var buffer = scratch
            var initialized = 0
            body(&buffer, &initialized)
            precondition(initialized >= 0 && initialized <= capacity, "initialized more bytes than the capacity")
            return Array(UnsafeBufferPointer(rebasing: scratch[..<initialized]))
        }
    }
}
