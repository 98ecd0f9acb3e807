import LonglinkTestSupport
import Testing

@testable import LonglinkWebSocket

/// An upgrade request's text with `replacing` fields swapped in (nil values drop the field).
func upgradeRequest(
    method: String = "GET",
    target: String = "/longlink",
    version: String = "HTTP/1.1",
    _ changes: [(String, String?)] = [],
    extra: [String] = []
) -> [UInt8] {
    var fields: [(String, String)] = [
        ("Host", "127.0.0.1:7071"),
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("Sec-WebSocket-Version", "13"),
        ("Sec-WebSocket-Protocol", "longlink.v1.protobuf"),
    ]
    for (name, value) in changes {
        if let index = fields.firstIndex(where: { $0.0 == name }) {
            if let value { fields[index].1 = value } else { fields.remove(at: index) }
        } else if let value {
            fields.append((name, value))
        }
    }
    var text = "\(method) \(target) \(version)\r\n"
    for (name, value) in fields { text += "\(name): \(value)\r\n" }
    for line in extra { text += line + "\r\n" }
    return Array((text + "\r\n").utf8)
}

/// The parse result of `bytes`, then the policy's answer.
func answer(_ bytes: [UInt8], policy: WebSocketUpgradePolicy = WebSocketUpgradePolicy(), limit: Int = 8192) -> Result<WebSocketAcceptance, WebSocketRefusal>? {
    let parsed = bytes.withUnsafeBytes { WebSocketHandshakeParser.parse($0, maxHeadSize: limit) }
    switch parsed {
    case .incomplete: return nil
    case .refused(let refusal): return .failure(refusal)
    case .complete(let request, let length):
        #expect(length == bytes.count)
        return policy.evaluate(request)
    }
}

@Suite("WebSocket upgrade handshake (parser and policy)", .ownThreads)
struct WebSocketHandshakeTests {
    @Test("RFC 6455's sample key gets RFC 6455's sample accept value; SHA-1 and base64 match known vectors")
    func acceptValue() throws {
        #expect(WebSocketAcceptance.accept(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(Base64.encode(SHA1.digest(Array("abc".utf8))) == "qZk+NkcGgWq6PiVxeFDCbJzQ2J0=")
        #expect(Base64.encode(SHA1.digest([])) == "2jmj7l5rSw0yVb/vlWAYkK/YBwk=")
        let long = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        let hex: [String] = SHA1.digest(long).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }
        #expect(hex.joined() == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
        for sample in [[UInt8](), [1], [1, 2], [1, 2, 3], [255, 254, 253, 252]] {
            #expect(Base64.decode(Substring(Base64.encode(sample))) == sample)
        }
        for bad in ["abc", "ab=c", "a===", "AB==CD==", "AB*=", "AR=="] { #expect(Base64.decode(Substring(bad)) == nil, "\(bad)") }
    }

    @Test("a good request is accepted with the sub-protocol; the response is a 101 with the accept hash")
    func accepted() throws {
        let result = try #require(answer(upgradeRequest()))
        let acceptance = try result.get()
        #expect(acceptance.subprotocol == "longlink.v1.protobuf")
        let text = String(decoding: acceptance.responseBytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
        #expect(text.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
        #expect(text.hasSuffix("\r\n\r\n"))
        // Header names and tokens are case-insensitive, token lists are comma-separated, a query is ignored.
        let mixed = upgradeRequest(target: "/longlink?v=1", [
            ("Upgrade", "WebSocket"), ("Connection", "keep-alive, Upgrade"), ("Sec-WebSocket-Protocol", "other, longlink.v1.protobuf"),
        ])
        #expect(try answer(mixed)?.get() != nil)
        let lower = Array(("GET /longlink HTTP/1.1\r\nhost: a\r\nupgrade: WEBSOCKET\r\nconnection: UPGRADE\r\n"
            + "sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n"
            + "sec-websocket-protocol: longlink.v1.protobuf\r\n\r\n").utf8)
        #expect(try answer(lower)?.get() != nil)
    }

    @Test(
        "each broken requirement is refused with its status",
        arguments: [
            ("POST", upgradeRequest(method: "POST"), 405),
            ("wrong path", upgradeRequest(target: "/other"), 404),
            ("HTTP/1.0", upgradeRequest(version: "HTTP/1.0"), 400),
            ("no Upgrade", upgradeRequest([("Upgrade", nil)]), 426),
            ("Upgrade: h2c", upgradeRequest([("Upgrade", "h2c")]), 426),
            ("no Connection", upgradeRequest([("Connection", nil)]), 400),
            ("Connection: close", upgradeRequest([("Connection", "close")]), 400),
            ("no version", upgradeRequest([("Sec-WebSocket-Version", nil)]), 426),
            ("version 8", upgradeRequest([("Sec-WebSocket-Version", "8")]), 426),
            ("two versions", upgradeRequest(extra: ["Sec-WebSocket-Version: 13"]), 426),
            ("no key", upgradeRequest([("Sec-WebSocket-Key", nil)]), 400),
            ("short key", upgradeRequest([("Sec-WebSocket-Key", "c2hvcnQ=")]), 400),
            ("key not base64", upgradeRequest([("Sec-WebSocket-Key", "!!!!!!!!!!!!!!!!!!!!!!==")]), 400),
            ("two keys", upgradeRequest(extra: ["Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="]), 400),
            ("no Host", upgradeRequest([("Host", nil)]), 400),
            ("foreign origin", upgradeRequest([("Origin", "https://evil.example")]), 403),
            ("origin on another port", upgradeRequest([("Origin", "http://127.0.0.1:8000")]), 403),
            ("no sub-protocol", upgradeRequest([("Sec-WebSocket-Protocol", nil)]), 400),
            ("another sub-protocol", upgradeRequest([("Sec-WebSocket-Protocol", "mqtt")]), 400),
            ("obsolete line folding", upgradeRequest(extra: ["X-A: 1", " folded"]), 400),
            ("space before colon", upgradeRequest(extra: ["X-A : 1"]), 400),
            ("bare LF", Array("GET /longlink HTTP/1.1\nHost: a\r\n\r\n".utf8), 400),
            ("malformed request line", Array("GET  /longlink HTTP/1.1\r\n\r\n".utf8), 400),
        ]
    )
    func refused(_ name: String, _ bytes: [UInt8], _ status: Int) throws {
        let result = try #require(answer(bytes), "\(name): incomplete")
        guard case .failure(let refusal) = result else {
            Issue.record("\(name): accepted")
            return
        }
        #expect(refusal.status == status, "\(name): \(refusal)")
        let text = String(decoding: refusal.responseBytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 \(status) "))
        if status == 426 && name.contains("version") { #expect(text.contains("Sec-WebSocket-Version: 13\r\n")) }
        if status == 405 { #expect(text.contains("Allow: GET\r\n")) }
    }

    @Test("an incomplete head waits; a head over the limit is refused with 431, complete or not")
    func sizeLimit() throws {
        let request = upgradeRequest()
        #expect(answer(Array(request.dropLast(1))) == nil)
        let padded = upgradeRequest(extra: ["X-Padding: " + String(repeating: "a", count: 9000)])
        guard case .failure(let refusal)? = answer(padded) else { Issue.record("not refused"); return }
        #expect(refusal.status == 431)
        guard case .failure(let partial)? = answer(Array(padded.prefix(8500))) else { Issue.record("partial head not refused"); return }
        #expect(partial.status == 431)
    }

    @Test("origins: none (apps) and same-origin pass; a list, '*' and trusted ports admit others")
    func origins() throws {
        let policy = WebSocketOriginPolicy()
        #expect(policy.admits(origin: nil, host: "127.0.0.1:7071", secure: false))
        #expect(policy.admits(origin: "http://127.0.0.1:7071", host: "127.0.0.1:7071", secure: false))
        #expect(policy.admits(origin: "https://example.com", host: "example.com", secure: true))
        #expect(!policy.admits(origin: "http://example.com", host: "example.com", secure: true), "port 80 is not 443")
        #expect(!policy.admits(origin: "null", host: "127.0.0.1:7071", secure: false))
        #expect(!policy.admits(origin: "http://127.0.0.1:9170", host: "127.0.0.1:7071", secure: false))
        policy.trust(port: 9170)
        #expect(policy.admits(origin: "http://127.0.0.1:9170", host: "127.0.0.1:7071", secure: false))
        #expect(!policy.admits(origin: "http://evil.example:9170", host: "127.0.0.1:7071", secure: false))
        #expect(policy.admits(origin: "http://[::1]:9170", host: "[::1]:7071", secure: false))
        let listed = WebSocketOriginPolicy(allowed: ["https://App.example.com"])
        #expect(listed.admits(origin: "https://app.example.com", host: "gw.example.com", secure: true))
        #expect(!listed.admits(origin: "https://other.example.com", host: "gw.example.com", secure: true))
        #expect(WebSocketOriginPolicy(allowed: ["*"]).admits(origin: "null", host: "x", secure: false))
    }
}
