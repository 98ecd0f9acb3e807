import LonglinkCore
import LonglinkProtobuf

/// Fuzz target: the frame decoder. The input is read the way a connection reads its socket (varint-framed client
/// frames until an error or the end), then decoded whole as one body in both directions. Every frame that
/// decodes must survive an encode/decode round trip unchanged, and every client body must get the same answer
/// (frame or error) from the codec with its fast paths as from protobuf-c alone.
enum FrameDecoderFuzz {
    static let codec = ProtobufFrameCodec()
    static let reference = ProtobufFrameCodec(fastPaths: false)
    static let reader = FrameReader(maxFrameSize: 4_096)

    static func run(_ input: UnsafeRawBufferPointer) {
        var buffer = ByteBuffer(bytes: input)
        while true {
            let frame: ClientFrame?
            do {
                frame = try codec.decodeNextClientFrame(from: &buffer, reader: reader)
            } catch {
                break  // a connection closes here
            }
            guard let frame else { break }
            roundTrip(frame)
        }
        conforms(input)
        // The input as the body of one publish, so the fuzzer's bytes reach the publish fast path's fields too.
        if input.count < 16_384 {
            var publish: [UInt8] = [13 << 3 | 2]
            var length = input.count
            while length >= 0x80 {
                publish.append(UInt8(truncatingIfNeeded: length) | 0x80)
                length >>= 7
            }
            publish.append(UInt8(length))
            publish += input
            publish.withUnsafeBytes { conforms($0) }
        }
        if let frame = try? codec.decodeServerFrame(body: input) {
            var out = ByteBuffer()
            guard (try? codec.encode(frame, into: &out)) != nil else { return }
            let again = try? codec.decodeNextServerFrame(from: &out, reader: FrameReader(maxFrameSize: 1 << 24))
            precondition(again == frame, "server frame changed in a round trip: \(frame) → \(String(describing: again))")
        }
    }

    /// The fast paths answer `body` exactly as protobuf-c does: the same frame, or the same error.
    static func conforms(_ body: UnsafeRawBufferPointer) {
        let fast = Result { () throws(FrameError) in try codec.decodeClientFrame(body: body) }
        let slow = Result { () throws(FrameError) in try reference.decodeClientFrame(body: body) }
        precondition(fast == slow, "the fast path answered \(fast), protobuf-c \(slow)")
        // The domain values a decoded publish carries for the peer (taken unchecked) are what its texts give;
        // `OrderID`'s and `OrderState`'s `==` compare the precomputed hashes too.
        if case .success(.publish(let request)) = fast {
            precondition(request.validOrderID == OrderID(request.orderID), "order id \(request.orderID) checked wrong")
            precondition(request.validLine == BusinessLine(request.line), "line \(request.line) checked wrong")
            precondition(request.target == OrderState(request.targetState), "state \(request.targetState) hashed wrong")
        }
    }

    static func roundTrip(_ frame: ClientFrame) {
        var out = ByteBuffer()
        guard (try? codec.encode(frame, into: &out)) != nil else { return }
        let again = try? codec.decodeNextClientFrame(from: &out, reader: FrameReader(maxFrameSize: 1 << 24))
        precondition(again == frame, "client frame changed in a round trip: \(frame) → \(String(describing: again))")
    }

    /// Seed inputs: one of each client frame kind, framed, plus a server frame body.
    static func seeds() -> [[UInt8]] {
        let frames: [ClientFrame] = [
            .connect(ConnectRequest(token: "eyJhbGciOiJIUzI1NiJ9.e30.sig", clientName: "seed", clientVersion: "1")),
            .subscribe(SubscribeRequest(requestID: 1, route: "order://taxi/8812", since: StreamPosition(epoch: 7, offset: 42))),
            .unsubscribe(UnsubscribeRequest(requestID: 2, route: "order://taxi/8812")),
            .publish(
                PublishRequest(
                    requestID: 3,
                    orderID: "8812",
                    line: "taxi",
                    targetState: "driver_assigned",
                    fields: OrderFields(driverID: "d-1", etaSeconds: 120),
                    idempotencyKey: "k",
                    wantsReceipts: true
                )
            ),
            .ack(Ack(route: "order://taxi/8812", offset: 9)),
            .ping, .pong,
            .refresh(RefreshRequest(token: "t")),
        ]
        var seeds: [[UInt8]] = []
        var stream: [UInt8] = []
        for frame in frames {
            var out = ByteBuffer()
            try! codec.encode(frame, into: &out)
            seeds.append(out.readableArray)
            stream += out.readableArray
        }
        seeds.append(stream)
        var server = ByteBuffer()
        try! codec.encode(.disconnect(Disconnect(code: .shutdown, reason: "seed", reconnectAfterMillis: 5)), into: &server)
        seeds.append(Array(server.readableArray.dropFirst()))
        return seeds
    }
}
