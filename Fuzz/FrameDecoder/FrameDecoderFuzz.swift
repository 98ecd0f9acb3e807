import LonglinkCore
import LonglinkProtobuf

/// Fuzz target: the frame decoder. The input is read the way a connection reads its socket (varint-framed client
/// frames until an error or the end), then decoded whole as one body in both directions. Every frame that
/// decodes must survive an encode/decode round trip unchanged.
enum FrameDecoderFuzz {
    static let codec = ProtobufFrameCodec()
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
        _ = try? codec.decodeClientFrame(body: input)
        if let frame = try? codec.decodeServerFrame(body: input) {
            var out = ByteBuffer()
            guard (try? codec.encode(frame, into: &out)) != nil else { return }
            let again = try? codec.decodeNextServerFrame(from: &out, reader: FrameReader(maxFrameSize: 1 << 24))
            precondition(again == frame, "server frame changed in a round trip: \(frame) → \(String(describing: again))")
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
