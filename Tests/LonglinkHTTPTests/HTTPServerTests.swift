import Foundation
import Glibc
import LonglinkCore
import LonglinkHTTP
import LonglinkLoop
import LonglinkTestSupport
import Synchronization
import Testing

/// An HTTP server on its own event loop thread with a handler made for the tests.
final class TestHTTPServer {
    let group: EventLoopGroup
    let port: Int
    /// The exchange of the last `/firehose` request, for the test to push into.
    let firehose = ExchangeBox()

    init(configuration: HTTPServer.Configuration = HTTPServer.Configuration(sweepInterval: .milliseconds(50))) throws {
        group = try EventLoopGroup(numberOfThreads: 1)
        let fd = try Socket.listen(host: "127.0.0.1", port: 0)
        port = try Socket.localPort(fd)
        let firehose = self.firehose
        group.loops[0].execute { context in
            let server = try! HTTPServer(listeningFD: fd, on: context, configuration: configuration) { request, exchange in
                switch request.path {
                case "/hello": return .text("hi \(request.method)")
                case "/echo": return HTTPResponse(status: .ok, body: request.body)
                case "/later":
                    Thread {
                        usleep(20_000)
                        exchange.respond(.text("later"))
                    }.start()
                    return nil
                case "/never": return nil
                case "/stream":
                    exchange.startStream(HTTPResponse(status: .ok, headers: [("Content-Type", "text/event-stream")]))
                    Thread {
                        for index in 0..<3 { exchange.send(Array("data: \(index)\n\n".utf8)) }
                        exchange.finish()
                    }.start()
                    return nil
                case "/firehose":
                    exchange.startStream(HTTPResponse(status: .ok))
                    firehose.value.withLock { $0 = exchange }
                    return nil
                default: return .error(.notFound, "nothing at \(request.path)")
                }
            }
            context.attach(server)
        }
    }

    deinit { group.shutdownGracefully() }
}

/// Holds the firehose exchange for the test thread.
final class ExchangeBox: Sendable {
    let value = Mutex<HTTPExchange?>(nil)
}

@Suite("HTTP server on the event loop (real sockets)", .serialized, .ownThreads)
struct HTTPServerTests {
    @Test("keeps a connection alive across requests, answers pipelined requests in order, and HEAD without a body")
    func keepAliveAndPipelining() throws {
        let server = try TestHTTPServer()
        let client = try HTTPTestClient(port: server.port)
        for _ in 0..<3 {
            try client.request("GET", "/hello")
            let response = try #require(client.readResponse())
            #expect(response.status == 200 && response.text == "hi GET")
            #expect(response.header("connection") == "keep-alive")
        }
        try client.send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nonePOST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\ntwo")
        #expect(client.readResponse()?.text == "one")
        #expect(client.readResponse()?.text == "two")
        try client.request("HEAD", "/hello")
        let head = try #require(client.readResponse(headOnly: true))
        #expect(head.header("content-length") == "7" && head.body.isEmpty)
        #expect(client.buffered.isEmpty)
    }

    @Test("over the wire, what it does not understand gets the right status and a close")
    func refusalsOverTheWire() throws {
        let server = try TestHTTPServer()
        let cases: [(String, Int)] = [
            ("BREW /pot HTTP/1.1\r\nHost: h\r\nContent-Length: x\r\n\r\n", 400),
            ("POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", 411),
            ("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 2000000\r\n\r\n", 413),
            ("GET /\(String(repeating: "x", count: 9_000)) HTTP/1.1\r\nHost: h\r\n\r\n", 414),
            ("GET / HTTP/1.1\r\nHost: h\r\nCookie: \(String(repeating: "c", count: 17_000))\r\n\r\n", 431),
            ("GET / HTTP/3.0\r\nHost: h\r\n\r\n", 505),
        ]
        for (request, status) in cases {
            let client = try HTTPTestClient(port: server.port)
            try client.send(request)
            #expect(client.readResponse()?.status == status, "\(request.prefix(40))")
            #expect(client.waitForClose())
        }
        #expect(try HTTPTestClient.fetch(port: server.port, "GET", "/missing").status == 404)
    }

    @Test("a handler answers later from another thread; one that never answers gets 504 for it")
    func asynchronousAnswers() throws {
        var configuration = HTTPServer.Configuration(sweepInterval: .milliseconds(50))
        configuration.responseTimeout = .seconds(2)
        let server = try TestHTTPServer(configuration: configuration)
        #expect(try HTTPTestClient.fetch(port: server.port, "GET", "/later").text == "later")
        #expect(try HTTPTestClient.fetch(port: server.port, "GET", "/never").status == 504)
    }

    @Test("garbage gets 400 and a close; the server goes on serving others")
    func garbage() throws {
        let server = try TestHTTPServer()
        var generator = SplitMix(seed: 7)
        for round in 0..<20 {
            let client = try HTTPTestClient(port: server.port)
            var bytes = (0..<(50 + round * 20)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            bytes += [13, 10, 13, 10]
            try client.send(bytes)
            let response = client.readResponse()
            #expect(response.map { (400..<600).contains($0.status) } ?? client.closed)
            #expect(client.waitForClose())
        }
        #expect(try HTTPTestClient.fetch(port: server.port, "GET", "/hello").status == 200)
    }

    @Test("a request that stalls gets 408; an idle keep-alive connection is closed")
    func timeouts() throws {
        var configuration = HTTPServer.Configuration(sweepInterval: .milliseconds(50))
        configuration.requestTimeout = .milliseconds(300)
        configuration.idleTimeout = .milliseconds(300)
        let server = try TestHTTPServer(configuration: configuration)
        let stalled = try HTTPTestClient(port: server.port)
        try stalled.send("GET /hello HTTP/1.1\r\nHost: h\r\n")
        #expect(stalled.readResponse()?.status == 408)
        #expect(stalled.waitForClose())
        let idle = try HTTPTestClient(port: server.port)
        try idle.request("GET", "/hello")
        #expect(idle.readResponse()?.status == 200)
        #expect(idle.waitForClose())
    }

    @Test("refuses connections past the limit with 503")
    func connectionLimit() throws {
        var configuration = HTTPServer.Configuration(sweepInterval: .milliseconds(50))
        configuration.maxConnections = 2
        let server = try TestHTTPServer(configuration: configuration)
        let first = try HTTPTestClient(port: server.port)
        let second = try HTTPTestClient(port: server.port)
        for client in [first, second] {
            try client.request("GET", "/hello")
            #expect(client.readResponse()?.status == 200)
        }
        let third = try HTTPTestClient(port: server.port)
        #expect(third.readResponse()?.status == 503)
    }

    @Test("streams a chunked response and ends it")
    func streaming() throws {
        let server = try TestHTTPServer()
        let response = try HTTPTestClient.fetch(port: server.port, "GET", "/stream")
        #expect(response.status == 200)
        #expect(response.header("transfer-encoding") == "chunked")
        #expect(response.text == "data: 0\n\ndata: 1\n\ndata: 2\n\n")
    }

    @Test("a stream reader that does not read is cut; its producer is told and never blocks")
    func slowStreamReaderIsCut() throws {
        var configuration = HTTPServer.Configuration(sweepInterval: .milliseconds(50))
        configuration.maxStreamBacklogBytes = 256 * 1024
        let server = try TestHTTPServer(configuration: configuration)
        let reader = try HTTPTestClient(port: server.port, receiveBuffer: 4_096)
        try reader.request("GET", "/firehose")
        var exchange: HTTPExchange?
        for _ in 0..<500 where exchange == nil {
            exchange = server.firehose.value.withLock { $0 }
            usleep(10_000)
        }
        let stream = try #require(exchange)
        let chunk = [UInt8](repeating: 0x61, count: 64 * 1024)
        var sent = 0
        while sent < 1_000 && !stream.isClosed {
            if !stream.send(chunk) { break }
            sent += 1
            if sent % 50 == 0 { usleep(5_000) }
        }
        #expect(sent < 1_000)
        for _ in 0..<500 where !stream.isClosed { usleep(10_000) }
        #expect(stream.isClosed)
        #expect(stream.wasCut)
        #expect(try HTTPTestClient.fetch(port: server.port, "GET", "/hello").status == 200)
    }
}
