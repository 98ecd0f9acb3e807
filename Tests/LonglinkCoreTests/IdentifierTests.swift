import Testing

@testable import LonglinkCore
import LonglinkTestSupport

/// The identifier rules read from bytes (what the codec's decoder calls) agree with the rules read from strings,
/// and a publish request made from checked values answers like one made from their texts.
@Suite("Identifiers from bytes", .ownThreads)
struct IdentifierTests {
    static let anyCaseCharacters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
    static let lowerCaseCharacters = "abcdefghijklmnopqrstuvwxyz0123456789_-"

    @Test("the allowed-byte sets hold exactly the documented characters")
    func byteSets() {
        for byte in UInt8(0)...UInt8(255) {
            let bytes = [byte]
            bytes.withUnsafeBufferPointer { buffer in
                let character = byte < 0x80 ? String(UnicodeScalar(byte)) : "\u{FFFD}"
                #expect(
                    Identifier.isValid(buffer, maxLength: 1, lowercaseOnly: false)
                        == Self.anyCaseCharacters.contains(character), "byte \(byte)")
                #expect(
                    Identifier.isValid(buffer, maxLength: 1, lowercaseOnly: true)
                        == Self.lowerCaseCharacters.contains(character), "byte \(byte)")
            }
        }
    }

    @Test("the built-in lines' words are their names' bytes")
    func builtInWords() {
        let words: [(String, UInt64)] = [
            ("taxi", Identifier.taxiWord), ("express", Identifier.expressWord), ("premium", Identifier.premiumWord),
            ("carpool", Identifier.carpoolWord),
        ]
        for (name, word) in words {
            #expect(Array(name.utf8).withUnsafeBufferPointer { Identifier.word($0) } == word, "\(name)")
            #expect(Array(name.utf8).withUnsafeBufferPointer { BusinessLine(utf8: $0) } == BusinessLine(name))
        }
        for length in 0...12 {
            let bytes = (0..<length).map { UInt8(0x41 + $0) }
            var expected: UInt64 = 0
            for (index, byte) in bytes.prefix(8).enumerated() { expected |= UInt64(byte) << UInt64(index * 8) }
            #expect(bytes.withUnsafeBufferPointer { Identifier.word($0) } == expected, "\(length) bytes")
        }
        // Same length and a near miss: not a built-in, still a valid line of its own.
        #expect(Array("taxy".utf8).withUnsafeBufferPointer { BusinessLine(utf8: $0) }?.name == "taxy")
        #expect(Array("expresS".utf8).withUnsafeBufferPointer { BusinessLine(utf8: $0) } == nil)
    }

    @Test("an id or a line read from bytes is valid exactly when its text is, and equals it (hash included)")
    func bytesAgreeWithText() {
        var state: UInt64 = 19
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let alphabet = Array((Self.anyCaseCharacters + " /:é\u{0}").utf8)
        var valid = 0
        for _ in 0..<5_000 {
            let length = Int(next() % 70)
            let bytes = (0..<length).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] }
            let text = String(decoding: bytes, as: UTF8.self)
            let id = bytes.withUnsafeBufferPointer { OrderID(utf8: $0) }
            let line = bytes.withUnsafeBufferPointer { BusinessLine(utf8: $0) }
            #expect(id == OrderID(text), "\(bytes)")
            #expect(id?.textHash == OrderID(text)?.textHash, "\(bytes)")
            #expect(line == BusinessLine(text), "\(bytes)")
            #expect(line?.nameHash == BusinessLine(text)?.nameHash, "\(bytes)")
            if id != nil { valid += 1 }
        }
        #expect(valid > 100, "the generator should also make valid ids")
    }

    @Test("a request made from checked values answers like one made from their texts; setting a text forgets the check")
    func publishRequestCarriesCheckedValues() {
        let typed = PublishRequest(
            requestID: 7, order: OrderID("o-1")!, line: .taxi, target: "dispatching", fields: OrderFields(etaSeconds: 3))
        let texts = PublishRequest(
            requestID: 7, orderID: "o-1", line: "taxi", targetState: "dispatching", fields: OrderFields(etaSeconds: 3))
        #expect(typed == texts)
        #expect(typed.hashValue == texts.hashValue)
        for request in [typed, texts] {
            #expect(request.validOrderID == OrderID("o-1"))
            #expect(request.validOrderID?.textHash == OrderID("o-1")?.textHash)
            #expect(request.validLine == .taxi)
            #expect(request.target == OrderState("dispatching"))
            #expect(request.target.nameHash == OrderState("dispatching").nameHash)
        }
        var changed = typed
        changed.orderID = "not valid"
        changed.line = "Taxi"
        changed.targetState = "in_trip"
        #expect(changed.validOrderID == nil)
        #expect(changed.validLine == nil)
        #expect(changed.target == OrderState("in_trip"))
        changed.orderID = "o-2"
        #expect(changed.validOrderID == OrderID("o-2"))
    }
}
