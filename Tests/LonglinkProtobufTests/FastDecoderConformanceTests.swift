import Testing

@testable import LonglinkCore
@testable import LonglinkProtobuf
import LonglinkTestSupport

/// The publish fast path (`PublishFastDecoder`) against protobuf-c (`ProtobufFrameCodec(fastPaths: false)`): for
/// every body, valid or hostile, the codec with its fast path answers exactly what protobuf-c alone answers (the
/// same frame, or the same error), and the fast path itself takes the plain publishes the gateway receives.
@Suite("Publish fast path conforms to protobuf-c", .ownThreads)
struct FastDecoderConformanceTests {
    static let fast = ProtobufFrameCodec()
    static let reference = ProtobufFrameCodec(fastPaths: false)

    /// Decodes `body` with the codec, as a `Result` whose errors compare too.
    static func decode(_ codec: ProtobufFrameCodec, _ body: [UInt8]) -> Result<ClientFrame, FrameError> {
        body.withUnsafeBytes { raw in
            do throws(FrameError) {
                return .success(try codec.decodeClientFrame(body: raw))
            } catch {
                return .failure(error)
            }
        }
    }

    /// The fast path's own answer (nil: it left the body to protobuf-c).
    static func fastPath(_ body: [UInt8]) -> PublishRequest? {
        body.withUnsafeBytes { PublishFastDecoder.decode($0) }
    }

    /// Both codecs agree on `body`; when the fast path took it, protobuf-c decoded the same publish.
    static func expectConforms(_ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = decode(reference, body)
        let actual = decode(fast, body)
        #expect(actual == expected, "body \(body)", sourceLocation: sourceLocation)
        if let taken = fastPath(body) {
            #expect(expected == .success(.publish(taken)), "fast path took \(body)", sourceLocation: sourceLocation)
            expectChecked(taken, sourceLocation: sourceLocation)
        }
    }

    /// The domain values the fast path hands over are what the texts give (the peer takes them unchecked).
    static func expectChecked(_ request: PublishRequest, sourceLocation: SourceLocation = #_sourceLocation) {
        let id = OrderID(request.orderID)
        let line = BusinessLine(request.line)
        #expect(request.validOrderID == id, sourceLocation: sourceLocation)
        #expect(request.validOrderID?.textHash == id?.textHash, sourceLocation: sourceLocation)
        #expect(request.validLine == line, sourceLocation: sourceLocation)
        #expect(request.target == OrderState(request.targetState), sourceLocation: sourceLocation)
        #expect(request.target.nameHash == OrderState(request.targetState).nameHash, sourceLocation: sourceLocation)
        // A valid id and line travel checked; otherwise as texts, for the peer to refuse.
        let checked = id != nil && line != nil
        #expect((request.orderIDHash != nil) == checked, sourceLocation: sourceLocation)
        #expect(request.lineIsValid == checked, sourceLocation: sourceLocation)
        #expect((request.targetStateHash != nil) == checked, sourceLocation: sourceLocation)
    }

    static func body(_ frame: ClientFrame) -> [UInt8] {
        var buffer = ByteBuffer()
        try! reference.encode(frame, into: &buffer)
        return try! FrameReader(maxFrameSize: 1 << 24).nextFrame(in: &buffer) { Array($0) }!
    }

    // MARK: Valid publishes

    @Test("takes every plain publish protobuf-c writes and decodes it to the same request")
    func plainPublishes() {
        var random = SplitMix(seed: 19)
        for _ in 0..<3_000 {
            let request = Self.randomPublish(&random, asciiOnly: true)
            let body = Self.body(.publish(request))
            let taken = Self.fastPath(body)
            #expect(taken == request, "\(request)")
            Self.expectConforms(body)
        }
    }

    @Test("leaves publishes with non-ASCII text to protobuf-c, with the same result")
    func nonASCII() {
        var random = SplitMix(seed: 7)
        for _ in 0..<500 {
            var request = Self.randomPublish(&random, asciiOnly: true)
            switch random.next() % 4 {
            case 0: request.orderID += "é"
            case 1: request.targetState = "fahrt_läuft"
            case 2: request.idempotencyKey = "✈️"
            default: request.fields.driverID = "fahrer-ß"
            }
            let body = Self.body(.publish(request))
            #expect(Self.fastPath(body) == nil)
            Self.expectConforms(body)
        }
    }

    @Test("the bench's publish and a publish without fields take the fast path")
    func typicalShapes() {
        let bench = PublishRequest(
            requestID: 4_711, orderID: "b1-999", line: "taxi", targetState: "driver_assigned",
            fields: OrderFields(driverID: "driver-1", payload: [UInt8](repeating: 0x2E, count: 128)), idempotencyKey: ""
        )
        let bare = PublishRequest(requestID: 1, orderID: "8812", line: "taxi", targetState: "created")
        let named = PublishRequest(requestID: 2, orderID: "8812", line: "premium", targetState: "at_the_lounge")
        let empty = PublishRequest(requestID: 0, orderID: "", line: "", targetState: "")
        for request in [bench, bare, named, empty] {
            #expect(Self.fastPath(Self.body(.publish(request))) == request)
            Self.expectConforms(Self.body(.publish(request)))
        }
        // The bench's publish reaches the peer with its id, line and state checked and hashed.
        let decoded = Self.fastPath(Self.body(.publish(bench)))
        #expect(decoded?.orderIDHash != nil && decoded?.lineIsValid == true && decoded?.targetStateHash != nil)
    }

    // MARK: Hostile bodies

    /// A publish body whose field bytes the test writes itself: `ClientFrame.publish = 13` around `fields`.
    static func publishFrame(_ fields: [UInt8]) -> [UInt8] {
        [13 << 3 | 2] + varint(UInt64(fields.count)) + fields
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        return bytes + [UInt8(rest)]
    }

    static func string(_ number: UInt8, _ text: String) -> [UInt8] {
        [number << 3 | 2] + varint(UInt64(text.utf8.count)) + Array(text.utf8)
    }

    /// request_id 5, order id 8812, line taxi, target state 1 (created).
    static let plain: [UInt8] = [1 << 3, 5] + string(2, "8812") + string(3, "taxi") + [4 << 3, 1]

    /// Hostile and unusual publish bodies (the fields inside `ClientFrame.publish`), by name.
    static func hostileCases() -> [(String, [UInt8])] {
        let id: [UInt8] = string(2, "8812")
        let taxi: [UInt8] = string(3, "taxi")
        let created: [UInt8] = [4 << 3, 1]
        var cases: [(String, [UInt8])] = []
        cases.append(("duplicate request_id", plain + [1 << 3, 6]))
        cases.append(("duplicate order_id", plain + string(2, "9")))
        cases.append(("both target members", plain + string(5, "created")))
        cases.append(("no target", [1 << 3, 5] + id + taxi))
        cases.append(("unknown field 9", plain + [9 << 3, 1]))
        cases.append(("unknown field 100", plain + [0xA0, 0x06, 1]))
        cases.append(("field number 0", plain + [0 << 3, 1]))
        cases.append(("order_id as a varint", [2 << 3 | 0, 1] + taxi + created))
        cases.append(("request_id as fixed64", [1 << 3 | 1, 1, 0, 0, 0, 0, 0, 0, 0] + id + created))
        cases.append(("request_id as a group", [1 << 3 | 3] + plain))
        cases.append(("request_id of six bytes", [1 << 3, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00] + id + created))
        cases.append(("request_id above 2^32", [1 << 3, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F] + id + created))
        cases.append(("request_id of ten bytes above 2^64", [1 << 3] + [UInt8](repeating: 0xFF, count: 9) + [0x7F] + id + created))
        cases.append(("request_id of eleven bytes", [1 << 3] + [UInt8](repeating: 0x80, count: 10) + [0x00] + id + created))
        cases.append(("request_id cut", [1 << 3, 0x80]))
        cases.append(("key cut", plain + [0x80]))
        cases.append(("order_id length past the end", [2 << 3 | 2, 50, 0x38]))
        cases.append(("order_id length of 2^32", [2 << 3 | 2, 0x80, 0x80, 0x80, 0x80, 0x10, 0x38]))
        cases.append(("order_id with a NUL", string(2, "88\u{0}12") + created))
        cases.append(("order_id not UTF-8", [2 << 3 | 2, 2, 0xC3, 0x28, 4 << 3, 1]))
        cases.append(("state 0", [1 << 3, 5] + id + [4 << 3, 0]))
        cases.append(("state not in the catalog", [1 << 3, 5] + id + [4 << 3, 0x7F]))
        cases.append(("state negative", [1 << 3, 5] + id + [4 << 3] + [UInt8](repeating: 0xFF, count: 9) + [0x01]))
        cases.append(("wants_receipts 2", plain + [8 << 3, 2]))
        cases.append(("wants_receipts of two bytes", plain + [8 << 3, 0x81, 0x00]))
        cases.append(("fields cut", plain + [6 << 3 | 2, 10, 1 << 3 | 2]))
        cases.append(("fields with an unknown field", plain + [6 << 3 | 2, 2, 15 << 3, 1]))
        cases.append(("fields with a duplicate payload", plain + [6 << 3 | 2, 6, 6 << 3 | 2, 1, 9, 6 << 3 | 2, 1, 8]))
        cases.append(("fields twice (protobuf-c merges)", plain + [6 << 3 | 2, 2, 2 << 3, 9] + [6 << 3 | 2, 2, 2 << 3, 8]))
        cases.append(("half a location", plain + [6 << 3 | 2, 2, 3 << 3, 9]))
        cases.append(("rollout of 101", plain + [6 << 3 | 2, 2, 8 << 3, 101]))
        cases.append(("two toggle members", plain + [6 << 3 | 2, 4, 7 << 3, 1, 8 << 3, 50]))
        cases.append(("eta above 2^32", plain + [6 << 3 | 2, 6, 2 << 3, 0xFF, 0xFF, 0xFF, 0xFF, 0x10]))
        cases.append(("driver_id past the end of the fields", plain + [6 << 3 | 2, 3, 1 << 3 | 2, 5, 0x41]))
        cases.append(("a pong inside the publish", plain + [14 << 3 | 2, 0]))
        return cases
    }

    @Test("hostile and unusual bodies get protobuf-c's answer, never the fast path's")
    func hostile() {
        for (name, fields) in Self.hostileCases() {
            let body = Self.publishFrame(fields)
            #expect(Self.fastPath(body) == nil, "\(name)")
            Self.expectConforms(body)
        }
    }

    @Test("the ClientFrame around the publish: other kinds, two publishes, a prefix length that does not match")
    func frameShapes() {
        let inner = Self.plain
        let bodies: [[UInt8]] = [
            [13 << 3 | 2] + Self.varint(UInt64(inner.count)) + inner + [13 << 3 | 2, 2, 1 << 3, 9],
            [13 << 3 | 2] + Self.varint(UInt64(inner.count)) + inner + [14 << 3 | 2, 0],
            [14 << 3 | 2, 0] + [13 << 3 | 2] + Self.varint(UInt64(inner.count)) + inner,
            [13 << 3 | 2] + Self.varint(UInt64(inner.count + 1)) + inner,
            [13 << 3 | 2] + Self.varint(UInt64(inner.count - 1)) + inner,
            [13 << 3 | 2, 0x80 | UInt8(inner.count), 0x00] + inner,  // an overlong but valid length
            [13 << 3 | 2, 0],
            [13 << 3 | 0, 1],
            [13 << 3 | 2],
        ]
        for body in bodies { Self.expectConforms(body) }
    }

    @Test("random mutations of valid publishes: cuts, flipped, inserted and removed bytes")
    func mutations() {
        var random = SplitMix(seed: 2026)
        var taken = 0
        for round in 0..<1_500 {
            let original = Self.body(.publish(Self.randomPublish(&random, asciiOnly: round % 5 != 0)))
            for cut in stride(from: 1, to: original.count, by: max(1, original.count / 16)) {
                Self.expectConforms(Array(original[..<cut]))
            }
            for _ in 0..<8 {
                var body = original
                let index = Int(random.next() % UInt64(body.count))
                switch random.next() % 5 {
                case 0: body[index] ^= UInt8(truncatingIfNeeded: 1 << (random.next() % 8))
                case 1: body[index] = UInt8(truncatingIfNeeded: random.next())
                case 2: body.insert(UInt8(truncatingIfNeeded: random.next()), at: index)
                case 3: body.remove(at: index)
                default: body.insert(contentsOf: [UInt8(truncatingIfNeeded: random.next() % 16) << 3 | UInt8(random.next() % 6)], at: index)
                }
                guard !body.isEmpty else { continue }
                if Self.fastPath(body) != nil { taken += 1 }
                Self.expectConforms(body)
            }
        }
        #expect(taken > 100, "the mutations should also produce bodies the fast path takes")
    }

    // MARK: Random publishes

    static func randomPublish(_ random: inout SplitMix, asciiOnly: Bool) -> PublishRequest {
        let states = ["created", "dispatching", "driver_assigned", "in_trip", "completed", "cancelled", "custom_state", "", "a"]
        var fields = OrderFields.none
        switch random.next() % 6 {
        case 0: break
        case 1: fields = OrderFields(payload: randomBytes(&random, max: 300))
        case 2: fields = OrderFields(driverID: randomText(&random, max: 20), payload: randomBytes(&random, max: 200))
        case 3:
            fields = OrderFields(
                driverID: randomText(&random, max: 40),
                etaSeconds: UInt32(truncatingIfNeeded: random.next() >> UInt64(random.next() % 33)),
                location: GeoPoint(
                    latitudeE6: Int32(truncatingIfNeeded: random.next()), longitudeE6: Int32(truncatingIfNeeded: random.next())),
                cancellationReason: randomText(&random, max: 30),
                payload: randomBytes(&random, max: 64)
            )
        case 4:
            let toggles: [ToggleValue] = [.bool(true), .bool(false), .rollout(percent: Int(random.next() % 101)),
                                          .string(randomText(&random, max: 12))]
            fields = OrderFields(toggle: toggles[Int(random.next() % 4)])
        default:
            fields = OrderFields(etaSeconds: 0, location: GeoPoint(latitudeE6: 0, longitudeE6: 0))
        }
        return PublishRequest(
            requestID: [0, 1, 127, 128, 16_383, 16_384, UInt32.max][Int(random.next() % 7)] &+ UInt32(random.next() % 3),
            orderID: random.next() % 2 == 0
                ? randomText(&random, max: 70, from: identifierBytes) : randomText(&random, max: 70),
            line: random.next() % 2 == 0 ? randomText(&random, max: 34, from: lineBytes) : randomText(&random, max: 34),
            targetState: states[Int(random.next() % UInt64(states.count))],
            fields: fields,
            idempotencyKey: random.next() % 3 == 0 ? randomText(&random, max: 40) : "",
            wantsReceipts: random.next() % 2 == 0
        )
    }

    /// The bytes of valid order ids and of valid line names (a random text of them is valid up to 64 and 32 bytes).
    static let identifierBytes = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-".utf8)
    static let lineBytes = Array("abcdefghijklmnopqrstuvwxyz0123456789_-".utf8)

    static func randomText(_ random: inout SplitMix, max: Int, from alphabet: [UInt8]) -> String {
        let length = Int(random.next() % UInt64(max + 1))
        return String(decoding: (0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }, as: UTF8.self)
    }

    static func randomText(_ random: inout SplitMix, max: Int) -> String {
        let length = Int(random.next() % UInt64(max + 1))
        return String(decoding: (0..<length).map { _ in UInt8(1 + random.next() % 127) }, as: UTF8.self)
    }

    static func randomBytes(_ random: inout SplitMix, max: Int) -> [UInt8] {
        (0..<Int(random.next() % UInt64(max + 1))).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }
}

