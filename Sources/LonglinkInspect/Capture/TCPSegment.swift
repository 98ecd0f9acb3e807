/// One side of a TCP connection: an IPv4 or IPv6 address and a port.
public struct TCPEndpoint: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 bytes (IPv6), network order.
    public var address: [UInt8]
    /// The port.
    public var port: UInt16

    /// Creates an endpoint.
    public init(address: [UInt8], port: UInt16) {
        self.address = address
        self.port = port
    }

    /// `127.0.0.1:7070` or `[::1]:7070`.
    public var description: String {
        address.count == 4 ? "\(hostText):\(port)" : "[\(hostText)]:\(port)"
    }

    /// The address as text (dotted quad, or RFC 5952 IPv6 with the longest zero run compressed).
    public var hostText: String {
        if address.count == 4 { return address.map(String.init).joined(separator: ".") }
        var groups: [UInt16] = []
        for index in stride(from: 0, to: address.count - 1, by: 2) {
            groups.append(UInt16(address[index]) << 8 | UInt16(address[index + 1]))
        }
        var best: Range<Int>?
        var start: Int?
        for index in 0...groups.count {
            if index < groups.count, groups[index] == 0 {
                if start == nil { start = index }
            } else if let run = start {
                if index - run >= 2, index - run > (best?.count ?? 0) { best = run..<index }
                start = nil
            }
        }
        let text = { (range: ArraySlice<UInt16>) in range.map { String($0, radix: 16) }.joined(separator: ":") }
        guard let best else { return text(groups[...]) }
        return text(groups[..<best.lowerBound]) + "::" + text(groups[best.upperBound...])
    }

    public static func < (lhs: TCPEndpoint, rhs: TCPEndpoint) -> Bool {
        lhs.address != rhs.address ? lhs.address.lexicographicallyPrecedes(rhs.address) : lhs.port < rhs.port
    }
}

/// A TCP segment taken out of a captured packet.
public struct TCPSegment: Hashable, Sendable {
    /// Sender.
    public var source: TCPEndpoint
    /// Receiver.
    public var destination: TCPEndpoint
    /// Sequence number of the first payload byte (of the SYN itself for a SYN).
    public var sequence: UInt32
    /// TCP flags byte (FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10).
    public var flags: UInt8
    /// The payload that was captured.
    public var payload: [UInt8]
    /// Capture time, microseconds since the epoch.
    public var timeMicros: UInt64

    /// SYN flag.
    public var isSYN: Bool { flags & 0x02 != 0 }
    /// ACK flag.
    public var isACK: Bool { flags & 0x10 != 0 }
    /// FIN flag.
    public var isFIN: Bool { flags & 0x01 != 0 }
    /// RST flag.
    public var isRST: Bool { flags & 0x04 != 0 }
}

/// Why a packet yielded no TCP segment.
public enum PacketSkip: String, Hashable, Sendable, CaseIterable {
    /// A link type other than NULL/loopback, Ethernet, Linux SLL/SLL2 or raw IP.
    case unsupportedLinkType = "unsupported link type"
    /// Not IPv4 or IPv6 (ARP, …).
    case notIP = "not IP"
    /// IP, but not TCP (UDP, ICMP, …).
    case notTCP = "not TCP"
    /// An IP fragment (not reassembled; TCP over loopback is not fragmented).
    case fragment = "IP fragment"
    /// The captured bytes end before the headers do.
    case truncated = "cut short by the snap length"
}

/// Link layer → IPv4/IPv6 → TCP.
public enum PacketParser {
    /// The TCP segment in `packet`, or why there is none.
    public static func segment(_ packet: CapturedPacket) -> Result<TCPSegment, PacketSkipReason> {
        let data = packet.data
        let ip: Int
        switch packet.linkType {
        case 0, 108:  // NULL/loopback: a 4-byte address family (host order for NULL, network order for LOOP)
            guard data.count >= 4 else { return .failure(.init(.truncated)) }
            ip = 4
        case 1:  // Ethernet, with up to two VLAN tags
            var offset = 12
            guard data.count >= 14 else { return .failure(.init(.truncated)) }
            var type = BinaryReader.be16(data, offset)
            while type == 0x8100 || type == 0x88A8 {
                offset += 4
                guard data.count >= offset + 2 else { return .failure(.init(.truncated)) }
                type = BinaryReader.be16(data, offset)
            }
            guard type == 0x0800 || type == 0x86DD else { return .failure(.init(.notIP)) }
            ip = offset + 2
        case 113:  // Linux cooked capture v1: protocol at 14, header 16 bytes
            guard data.count >= 16 else { return .failure(.init(.truncated)) }
            guard [0x0800, 0x86DD].contains(BinaryReader.be16(data, 14)) else { return .failure(.init(.notIP)) }
            ip = 16
        case 276:  // Linux cooked capture v2: protocol at 0, header 20 bytes
            guard data.count >= 20 else { return .failure(.init(.truncated)) }
            guard [0x0800, 0x86DD].contains(BinaryReader.be16(data, 0)) else { return .failure(.init(.notIP)) }
            ip = 20
        case 101, 12, 14, 228, 229:  // raw IP
            ip = 0
        default:
            return .failure(.init(.unsupportedLinkType))
        }
        return internet(data, at: ip, time: packet.timeMicros)
    }

    private static func internet(_ data: [UInt8], at start: Int, time: UInt64) -> Result<TCPSegment, PacketSkipReason> {
        guard data.count > start else { return .failure(.init(.truncated)) }
        switch data[start] >> 4 {
        case 4:
            guard data.count >= start + 20 else { return .failure(.init(.truncated)) }
            let headerLength = Int(data[start] & 0x0F) * 4
            let total = Int(BinaryReader.be16(data, start + 2))
            let fragment = BinaryReader.be16(data, start + 6)
            guard fragment & 0x3FFF == 0 else { return .failure(.init(.fragment)) }
            guard data[start + 9] == 6 else { return .failure(.init(.notTCP)) }
            guard headerLength >= 20, total >= headerLength else { return .failure(.init(.notIP)) }
            return transport(
                data, at: start + headerLength, end: min(data.count, start + total),
                source: Array(data[(start + 12)..<(start + 16)]), destination: Array(data[(start + 16)..<(start + 20)]),
                time: time)
        case 6:
            guard data.count >= start + 40 else { return .failure(.init(.truncated)) }
            let payloadLength = Int(BinaryReader.be16(data, start + 4))
            var next = data[start + 6]
            var offset = start + 40
            // Extension headers: hop-by-hop (0), routing (43), destination options (60), authentication (51).
            while [0, 43, 60, 51].contains(next) {
                guard data.count >= offset + 2 else { return .failure(.init(.truncated)) }
                let length = next == 51 ? (Int(data[offset + 1]) + 2) * 4 : (Int(data[offset + 1]) + 1) * 8
                next = data[offset]
                offset += length
            }
            guard next != 44 else { return .failure(.init(.fragment)) }
            guard next == 6 else { return .failure(.init(.notTCP)) }
            return transport(
                data, at: offset, end: min(data.count, start + 40 + payloadLength),
                source: Array(data[(start + 8)..<(start + 24)]), destination: Array(data[(start + 24)..<(start + 40)]),
                time: time)
        default:
            return .failure(.init(.notIP))
        }
    }

    private static func transport(
        _ data: [UInt8], at start: Int, end: Int, source: [UInt8], destination: [UInt8], time: UInt64
    ) -> Result<TCPSegment, PacketSkipReason> {
        guard end >= start + 20 else { return .failure(.init(.truncated)) }
        let headerLength = Int(data[start + 12] >> 4) * 4
        guard headerLength >= 20, end >= start + headerLength else { return .failure(.init(.truncated)) }
        return .success(TCPSegment(
            source: TCPEndpoint(address: source, port: BinaryReader.be16(data, start)),
            destination: TCPEndpoint(address: destination, port: BinaryReader.be16(data, start + 2)),
            sequence: BinaryReader.be32(data, start + 4),
            flags: data[start + 13],
            payload: Array(data[(start + headerLength)..<end]),
            timeMicros: time))
    }
}

/// A `PacketSkip` as an `Error` (for `Result`).
public struct PacketSkipReason: Error, Hashable, Sendable {
    /// Why.
    public var skip: PacketSkip
    init(_ skip: PacketSkip) { self.skip = skip }
}
