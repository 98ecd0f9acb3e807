import LonglinkCore
import Testing

@testable import LonglinkProtobuf
import LonglinkTestSupport

@Suite("ProtobufFrameCodec round trips", .ownThreads)
struct ProtobufFrameCodecTests {
    let codec = ProtobufFrameCodec()

    @Test("every server frame survives encode and decode", arguments: Samples.serverFrames)
    func serverRoundTrip(_ name: String, _ frame: ServerFrame) throws {
        var buffer = ByteBuffer()
        try codec.encode(frame, into: &buffer)
        let decoded = try codec.decodeNextServerFrame(from: &buffer)
        #expect(decoded == frame, "\(name)")
        #expect(buffer.readableBytes == 0)
    }

    @Test("every client frame survives encode and decode", arguments: Samples.clientFrames)
    func clientRoundTrip(_ name: String, _ frame: ClientFrame) throws {
        var buffer = ByteBuffer()
        try codec.encode(frame, into: &buffer)
        let decoded = try codec.decodeNextClientFrame(from: &buffer)
        #expect(decoded == frame, "\(name)")
        #expect(buffer.readableBytes == 0)
    }

    @Test("a push does not carry the idempotency key; a publish does")
    func idempotencyKey() throws {
        var push = Samples.firstPush
        push.record.idempotencyKey = "pub-1:8812:1"
        var buffer = ByteBuffer()
        try codec.encode(ServerFrame.push(push), into: &buffer)
        guard case .push(let decoded)? = try codec.decodeNextServerFrame(from: &buffer) else {
            Issue.record("not a push")
            return
        }
        #expect(decoded.record.idempotencyKey == "")
        push.record.idempotencyKey = ""
        #expect(decoded == push)

        let publish = PublishRequest(requestID: 1, orderID: "1", line: "taxi", targetState: "created",
                                     idempotencyKey: "k-1")
        try codec.encode(ClientFrame.publish(publish), into: &buffer)
        #expect(try codec.decodeNextClientFrame(from: &buffer) == .publish(publish))
    }

    @Test("the order id and line of a pushed record come from the route")
    func pushRebuildsOrderFromRoute() throws {
        var buffer = ByteBuffer()
        try codec.encode(ServerFrame.push(Samples.fullPush), into: &buffer)
        guard case .push(let push)? = try codec.decodeNextServerFrame(from: &buffer) else {
            Issue.record("not a push")
            return
        }
        #expect(push.record.orderID.rawValue == "cp-77.a_B")
        #expect(push.record.line == .carpool)
        #expect(push.record.route == push.route)
    }

    @Test("a catalog state costs one byte, a custom state its name")
    func stateCatalog() throws {
        func size(_ to: OrderState) throws -> Int {
            let push = Push(route: Samples.taxi8812,
                            record: Samples.record(on: Samples.taxi8812, from: nil, to: to, offset: 1))
            var buffer = ByteBuffer(capacity: 256)
            try ProtobufFrameCodec().encode(.push(push), into: &buffer)
            return try FrameReader(maxFrameSize: Int(UInt32.max)).nextFrame(in: &buffer) { $0.count } ?? 0
        }
        // Tag + value for a catalog number, tag + length + name otherwise.
        #expect(try size("custom_state") - size("paid") == 1 + "custom_state".utf8.count - 1)
        for name in ["created", "dispatching", "matching", "reserved", "driver_assigned", "driver_arriving",
                     "driver_arrived", "in_trip", "completed", "paid", "cancelled", "no_driver_timeout",
                     "pool_matched"] {
            let code = StateCatalog.code(of: OrderState(name))
            #expect(code != nil, "\(name) is in the catalog")
            #expect(code.flatMap { StateCatalog.states[Int($0)] } == OrderState(name), "\(name)'s number names it back")
            #expect(try size(OrderState(name)) == size("paid"))
        }
        #expect(StateCatalog.code(of: "paid") == 10)
        #expect(StateCatalog.code(of: "custom_state") == nil)
        #expect(StateCatalog.states.compactMap { $0 }.count == 13)
    }

    @Test("encoding appends to what the buffer already holds")
    func appends() throws {
        var buffer = ByteBuffer()
        buffer.writeBytes([0xAA, 0xBB])
        try codec.encode(ServerFrame.ping, into: &buffer)
        #expect(buffer.readableArray == [0xAA, 0xBB, 0x02, 0x12, 0x00])
    }

    @Test("encodedFrame gives exactly the bytes encode(into:) appends, for every server frame")
    func encodedFrameMatchesEncode() throws {
        for (name, frame) in Samples.serverFrames {
            var buffer = ByteBuffer()
            try codec.encode(frame, into: &buffer)
            #expect(try codec.encodedFrame(frame) == buffer.readableArray, "\(name)")
            var decodable = ByteBuffer()
            decodable.writeBytes(try codec.encodedFrame(frame))
            #expect(try codec.decodeNextServerFrame(from: &decodable) == frame, "\(name)")
        }
        let big = Push(
            route: .order(.taxi, OrderID("big")!),
            record: OrderChangeRecord(
                orderID: OrderID("big")!, line: .taxi, fromState: nil, toState: "created",
                fields: OrderFields(payload: [UInt8](repeating: 7, count: 300)),
                position: StreamPosition(epoch: 1, offset: 1), timestampMillis: 1, idempotencyKey: "k")
        )
        var buffer = ByteBuffer()
        try codec.encode(ServerFrame.push(big), into: &buffer)
        #expect(buffer.readableBytes > 300)
        #expect(try codec.encodedFrame(.push(big)) == buffer.readableArray, "a two-byte length prefix")
    }

    @Test("ping and pong are the smallest frames, one per direction")
    func tinyFrames() throws {
        var buffer = ByteBuffer()
        try codec.encode(ServerFrame.pong, into: &buffer)
        try codec.encode(ClientFrame.ping, into: &buffer)
        try codec.encode(ClientFrame.pong, into: &buffer)
        #expect(buffer.readableArray == [0x02, 0x1A, 0x00, 0x02, 0x72, 0x00, 0x02, 0x7A, 0x00])
    }

    @Test("many frames in a row decode in order from one buffer")
    func manyFrames() throws {
        var buffer = ByteBuffer()
        for (_, frame) in Samples.serverFrames { try codec.encode(frame, into: &buffer) }
        var decoded: [ServerFrame] = []
        while let frame = try codec.decodeNextServerFrame(from: &buffer) { decoded.append(frame) }
        #expect(decoded == Samples.serverFrames.map(\.1))
    }

    @Test("a decoder fed one byte at a time yields every frame once, consuming nothing until it is complete")
    func byteAtATime() throws {
        var encoded = ByteBuffer()
        for (_, frame) in Samples.clientFrames { try codec.encode(frame, into: &encoded) }
        let bytes = encoded.readableArray

        var inbound = ByteBuffer()
        var decoded: [ClientFrame] = []
        for byte in bytes {
            inbound.writeByte(byte)
            while true {
                let before = inbound.readableBytes
                guard let frame = try codec.decodeNextClientFrame(from: &inbound) else {
                    #expect(inbound.readableBytes == before)
                    break
                }
                decoded.append(frame)
            }
        }
        #expect(decoded == Samples.clientFrames.map(\.1))
        #expect(inbound.readableBytes == 0)
    }

    @Test("10,000 pushes in one buffer decode back, in order")
    func tenThousandFrames() throws {
        var buffer = ByteBuffer()
        let base = Samples.fullPush
        for offset in 1...10_000 {
            var push = base
            push.record.position.offset = UInt64(offset)
            try codec.encode(ServerFrame.push(push), into: &buffer)
        }
        var count = 0
        while let frame = try codec.decodeNextServerFrame(from: &buffer) {
            count += 1
            guard case .push(let push) = frame else {
                Issue.record("frame \(count) is not a push")
                return
            }
            #expect(push.record.position.offset == UInt64(count))
            if count == 10_000 { #expect(push.record.fields == base.record.fields) }
        }
        #expect(count == 10_000)
        #expect(buffer.readableBytes == 0)
    }
}
