/// The few wire reads the fast paths need, on a raw cursor that moves forward and never past `end`. Each read
/// takes only what it is sure to read the way protobuf-c does, and returns nil for anything else (the caller then
/// leaves the body to the codec).
enum WireCursor {
    /// Marks `key`'s field number (below 32) as seen; false when it was seen before (protobuf-c would merge or
    /// overwrite: left to the codec).
    @inline(__always)
    static func firstTime(_ key: UInt8, _ seen: inout UInt32) -> Bool {
        let bit = UInt32(1) << UInt32(key >> 3)
        guard seen & bit == 0 else { return false }
        seen |= bit
        return true
    }

    /// A varint of at most five bytes whose value fits 32 bits (protobuf-c's `parse_uint32` reads those exactly).
    @inline(__always)
    static func varint32(_ cursor: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> UInt32? {
        var value: UInt32 = 0
        var shift: UInt32 = 0
        var position = cursor
        while position < end {
            let byte = position.pointee
            position += 1
            if shift == 28 {
                guard byte <= 0x0F else { return nil }  // a sixth byte, or bits above 2^32
            }
            value |= UInt32(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                cursor = position
                return value
            }
            shift += 7
        }
        return nil
    }

    /// The length of a length-delimited field, when that many bytes follow.
    @inline(__always)
    static func length(_ cursor: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Int? {
        var position = cursor
        guard let length = varint32(&position, end), Int(length) <= end - position else { return nil }
        cursor = position
        return Int(length)
    }

    /// A bool written as one byte 0 or 1 (protobuf-c takes any varint; other spellings go to the codec).
    @inline(__always)
    static func bool(_ cursor: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Bool? {
        guard cursor < end, cursor.pointee <= 1 else { return nil }
        defer { cursor += 1 }
        return cursor.pointee == 1
    }

    /// The bytes of a length-delimited field.
    @inline(__always)
    static func bytes(_ cursor: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        guard let length = self.length(&cursor, end) else { return nil }
        defer { cursor += length }
        return UnsafeBufferPointer(start: cursor, count: length)
    }

    /// A length-delimited string of ASCII bytes without NUL, as a Swift string (what `String(validatingCString:)`
    /// gives for protobuf-c's copy: valid UTF-8, and no NUL to end it early). Up to 15 bytes it is stored inline.
    @inline(__always)
    static func asciiString(_ cursor: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> String? {
        var position = cursor
        guard let bytes = self.bytes(&position, end), let text = asciiText(bytes) else { return nil }
        cursor = position
        return text
    }

    /// `bytes` as a Swift string when they are ASCII without NUL, else nil.
    @inline(__always)
    static func asciiText(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var mask: UInt8 = 0
        var sawNUL = false
        for byte in bytes {
            mask |= byte
            sawNUL = sawNUL || byte == 0
        }
        guard mask < 0x80, !sawNUL else { return nil }
        guard bytes.count > 0 else { return "" }
        // The bytes are ASCII, so they are copied in as they are: `String(decoding:as:)` would check them again
        // and take its repairing path (about 160 instructions per field). Up to 15 bytes the standard library
        // builds the small string and checks it is ASCII word by word.
        return String(unsafeUninitializedCapacity: bytes.count) { target in
            target.baseAddress!.initialize(from: bytes.baseAddress!, count: bytes.count)
            return bytes.count
        }
    }

    /// A `sint32` from its zigzag encoding.
    @inline(__always)
    static func unzigzag(_ value: UInt32) -> Int32 {
        Int32(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
    }
}
