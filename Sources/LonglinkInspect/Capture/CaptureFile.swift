/// One packet from a capture file: when it was captured, its link type and the captured bytes.
public struct CapturedPacket: Hashable, Sendable {
    /// Capture time in microseconds since the Unix epoch.
    public var timeMicros: UInt64
    /// The link-layer header type (`LINKTYPE_*` number: 0 loopback/NULL, 1 Ethernet, 113 Linux SLL, …).
    public var linkType: UInt32
    /// The captured bytes (possibly shorter than the packet on the wire, when the snap length cut it).
    public var data: [UInt8]

    /// Creates a packet.
    public init(timeMicros: UInt64, linkType: UInt32, data: [UInt8]) {
        self.timeMicros = timeMicros
        self.linkType = linkType
        self.data = data
    }
}

/// Why a capture file could not be read.
public struct CaptureError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, with the byte offset in the file where it applies.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// The packets of a classic pcap or a pcapng file (detected from the first bytes).
public struct CaptureFile: Hashable, Sendable {
    /// The file format.
    public enum Format: String, Hashable, Sendable {
        /// Classic libpcap (tcpdump -w), either byte order, micro- or nanosecond timestamps.
        case pcap
        /// pcapng (tshark/dumpcap -w), either byte order, any timestamp resolution.
        case pcapng
    }

    /// The format read.
    public var format: Format
    /// Every packet, in file order.
    public var packets: [CapturedPacket]
    /// True when the file ends inside a packet record (a capture still being written, or cut): the partial
    /// record was ignored.
    public var truncatedTail: Bool

    /// Reads a capture from its bytes.
    public init(bytes: [UInt8]) throws(CaptureError) {
        guard bytes.count >= 4 else { throw CaptureError("not a capture file: only \(bytes.count) bytes") }
        let magic = Array(bytes[0..<4])
        if magic == [0x0A, 0x0D, 0x0D, 0x0A] {
            format = .pcapng
            (packets, truncatedTail) = try PcapngReader.read(bytes)
        } else if PcapReader.byteOrder(magic) != nil {
            format = .pcap
            (packets, truncatedTail) = try PcapReader.read(bytes)
        } else {
            throw CaptureError(
                "not a pcap or pcapng file (magic number 0x\(RawWire.hex(magic)); tcpdump -w and tshark -w write these)")
        }
    }
}

/// Reads integers of either byte order from a byte array.
struct BinaryReader {
    let bytes: [UInt8]
    let littleEndian: Bool

    func u16(_ offset: Int) -> UInt16 {
        let a = UInt16(bytes[offset])
        let b = UInt16(bytes[offset + 1])
        return littleEndian ? a | b << 8 : a << 8 | b
    }

    func u32(_ offset: Int) -> UInt32 {
        let a = UInt32(u16(offset))
        let b = UInt32(u16(offset + 2))
        return littleEndian ? a | b << 16 : a << 16 | b
    }

    /// Big-endian (network order) 16 bits.
    static func be16(_ bytes: [UInt8], _ offset: Int) -> UInt16 { UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1]) }

    /// Big-endian (network order) 32 bits.
    static func be32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(be16(bytes, offset)) << 16 | UInt32(be16(bytes, offset + 2))
    }
}

/// Classic libpcap files: a 24-byte header, then records of 16-byte header + captured bytes.
enum PcapReader {
    /// (little-endian, nanosecond resolution) for a classic pcap magic number, or nil.
    static func byteOrder(_ magic: [UInt8]) -> (littleEndian: Bool, nanoseconds: Bool)? {
        switch magic {
        case [0xD4, 0xC3, 0xB2, 0xA1]: (true, false)
        case [0xA1, 0xB2, 0xC3, 0xD4]: (false, false)
        case [0x4D, 0x3C, 0xB2, 0xA1]: (true, true)
        case [0xA1, 0xB2, 0x3C, 0x4D]: (false, true)
        default: nil
        }
    }

    static func read(_ bytes: [UInt8]) throws(CaptureError) -> ([CapturedPacket], Bool) {
        guard let order = byteOrder(Array(bytes[0..<4])) else { throw CaptureError("not a classic pcap file") }
        guard bytes.count >= 24 else { throw CaptureError("pcap header cut off: \(bytes.count) of 24 bytes") }
        let reader = BinaryReader(bytes: bytes, littleEndian: order.littleEndian)
        let linkType = reader.u32(20) & 0xFFFF
        var packets: [CapturedPacket] = []
        var offset = 24
        while offset < bytes.count {
            guard bytes.count - offset >= 16 else { return (packets, true) }
            let seconds = UInt64(reader.u32(offset))
            let fraction = UInt64(reader.u32(offset + 4))
            let length = Int(reader.u32(offset + 8))
            guard length <= 256 * 1024 * 1024 else {
                throw CaptureError("pcap record at byte \(offset) claims \(length) captured bytes")
            }
            guard bytes.count - offset - 16 >= length else { return (packets, true) }
            let micros = seconds * 1_000_000 + (order.nanoseconds ? fraction / 1000 : fraction)
            packets.append(CapturedPacket(
                timeMicros: micros, linkType: linkType, data: Array(bytes[(offset + 16)..<(offset + 16 + length)])))
            offset += 16 + length
        }
        return (packets, false)
    }
}
