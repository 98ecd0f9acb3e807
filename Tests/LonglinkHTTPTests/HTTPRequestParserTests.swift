import LonglinkHTTP
import Testing
import LonglinkTestSupport

@Suite("HTTP request parser", .ownThreads)
struct HTTPRequestParserTests {
    let limits = HTTPLimits(maxRequestLineBytes: 128, maxHeadBytes: 512, maxHeaderCount: 8, maxBodyBytes: 64)

    private func parse(_ text: String) throws(HTTPParseError) -> HTTPRequestParser.Outcome {
        try HTTPRequestParser.parse(Array(text.utf8)[...], limits: limits)
    }

    private func status(_ text: String) -> Int? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error.status.code
        }
    }

    @Test("parses a request with query, headers and body, and reports the bytes it used")
    func wellFormed() throws {
        let text = "POST /admin/orders/taxi/88%2012?sort=user&filter=a+b&x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n"
            + "X-Thing:  spaced value  \r\n\r\nhelloGET / HTTP/1.1\r\n"
        guard case .request(let request, let consumed) = try parse(text) else {
            Issue.record("expected a request")
            return
        }
        #expect(request.method == "POST")
        #expect(request.pathSegments == ["admin", "orders", "taxi", "88 12"])
        #expect(request.queryValue("sort") == "user")
        #expect(request.queryValue("filter") == "a b")
        #expect(request.queryValue("x") == "")
        #expect(request.header("x-thing") == "spaced value")
        #expect(request.bodyText == "hello")
        #expect(request.keepAlive)
        #expect(consumed == text.utf8.count - "GET / HTTP/1.1\r\n".utf8.count)
    }

    @Test("asks for more bytes until the head and body are complete; accepts bare LF and leading empty lines")
    func incremental() throws {
        let full = "\r\nPUT /x HTTP/1.1\nHost: h\nContent-Length: 3\n\nabc"
        for cut in 1..<full.utf8.count {
            let prefix = String(decoding: Array(full.utf8)[0..<cut], as: UTF8.self)
            guard case .needMoreData = try parse(prefix) else {
                Issue.record("prefix of \(cut) bytes parsed as complete")
                return
            }
        }
        guard case .request(let request, _) = try parse(full) else {
            Issue.record("expected a request")
            return
        }
        #expect(request.bodyText == "abc")
    }

    @Test("HTTP/1.0 closes unless keep-alive is asked for; HTTP/1.1 keeps alive unless Connection: close")
    func keepAlive() throws {
        guard case .request(let old, _) = try parse("GET / HTTP/1.0\r\n\r\n"),
            case .request(let oldKeep, _) = try parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"),
            case .request(let closing, _) = try parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        else {
            Issue.record("expected requests")
            return
        }
        #expect(!old.keepAlive)
        #expect(oldKeep.keepAlive)
        #expect(!closing.keepAlive)
    }

    @Test(
        "refuses what it does not understand with the status that says why",
        arguments: [
            ("GARBAGE\r\n\r\n", 400),
            ("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET nopath HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("G(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost h\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: h\r\nBad Name: x\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: h\r\nX: a\u{01}b\r\n\r\n", 400),
            ("GET / HTTX/1.1\r\nHost: h\r\n\r\n", 400),
            ("POST /p HTTP/1.1\r\nHost: h\r\n\r\n", 411),
            ("POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", 411),
            ("POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 65\r\n\r\n", 413),
            ("GET /\(String(repeating: "a", count: 200)) HTTP/1.1\r\nHost: h\r\n\r\n", 414),
            ("GET /\(String(repeating: "a", count: 200))", 414),
            ("GET / HTTP/1.1\r\nHost: h\r\nX: \(String(repeating: "v", count: 600))\r\n\r\n", 431),
            ("GET / HTTP/1.1\r\nHost: h\r\n" + (0..<9).map { "X\($0): v\r\n" }.joined() + "\r\n", 431),
            ("GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505),
            ("GET / HTTP/1.2\r\nHost: h\r\n\r\n", 505),
        ]
    )
    func refusals(text: String, expected: Int) {
        #expect(status(text) == expected)
    }

    @Test("a long header section without its end is refused before it grows past the limit")
    func unterminatedHead() {
        #expect(status("GET / HTTP/1.1\r\nHost: h\r\n" + String(repeating: "X: y\r\n", count: 100)) == 431)
    }

    @Test("random bytes never crash the parser: each input parses, needs more, or is refused with 4xx/5xx")
    func garbage() {
        var generator = SplitMix(seed: 0x5eed)
        for _ in 0..<2_000 {
            let length = Int(generator.next() % 300)
            var bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            if generator.next() % 3 == 0 { bytes = Array("GET / HTTP/1.1\r\n".utf8) + bytes }
            do {
                _ = try HTTPRequestParser.parse(bytes[...], limits: limits)
            } catch {
                #expect((400..<600).contains(error.status.code))
            }
        }
    }
}

