import Foundation
import LonglinkLoop
import LonglinkRedis
import LonglinkTestSupport
import Synchronization
import Testing

@Suite("Redis connections against a real redis-server", .ownThreads)
struct RedisConnectionTests {
    @Test("a blocking connection runs commands with binary-safe arguments and throws error replies")
    func blockingCommands() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let connection = try RedisBlockingConnection(RedisAddress(host: "127.0.0.1", port: server.port))
        #expect(try connection.command(["PING"]) == .status("PONG"))
        let binary: [UInt8] = [0, 1, 2, 13, 10, 255]
        #expect(try connection.command(bytes: [Array("SET".utf8), Array("k".utf8), binary]) == .status("OK"))
        #expect(try connection.command(["GET", "k"]) == .bulk(binary))
        #expect(try connection.command(["GET", "missing"]) == .null)
        #expect(try connection.command(["INCRBY", "n", "41"]) == .integer(41))
        #expect(try connection.command(["RPUSH", "l", "a", "b"]) == .integer(2))
        #expect(try connection.command(["LRANGE", "l", "0", "-1"]) == .array([.bulk(Array("a".utf8)), .bulk(Array("b".utf8))]))
        #expect(throws: RedisError.self) { try connection.command(["INCR", "k"]) }
    }

    @Test("a blocking connection to a closed port fails with a connect error")
    func blockingRefused() throws {
        let server = try RedisServer()
        let port = server.port
        server.stop()
        #expect(throws: RedisError.self) { try RedisBlockingConnection(RedisAddress(host: "127.0.0.1", port: port), timeout: .seconds(1)) }
    }

    @Test("pipelined commands on the loop are answered in order")
    func pipelined() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let loop = try TestLoop()
        defer { loop.stop() }
        let replies = Mutex<[Int64]>([])
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: server.port)
        loop.run { context in
            guard let connection = try? RedisConnection(address: address, on: context) else { return }
            for _ in 0..<500 {
                connection.send(["INCR", "counter"]) { result in
                    if case .success(.integer(let value)) = result { replies.withLock { $0.append(value) } }
                }
            }
            context.attach(connection)
        }
        #expect(eventually { replies.withLock { $0.count } == 500 })
        #expect(replies.withLock { $0 } == Array(1...500))
    }

    @Test("subscribers receive published messages with their channel and binary payload")
    func pubSub() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let loop = try TestLoop()
        defer { loop.stop() }
        let received = Mutex<[String]>([])
        let subscribed = Atomic<Int>(0)
        let receivers = Mutex<[Int64]>([])
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: server.port)
        loop.run { context in
            guard let subscriber = try? RedisConnection(address: address, on: context) else { return }
            subscriber.onMessage = { channel, payload in
                let text = String(decoding: channel, as: UTF8.self) + "=" + payload.map { String($0) }.joined(separator: ".")
                received.withLock { $0.append(text) }
            }
            subscriber.subscribe(["a", "b"]) { result in
                if case .success = result { subscribed.store(2, ordering: .relaxed) }
            }
            context.attach(subscriber)
        }
        #expect(eventually { subscribed.load(ordering: .relaxed) == 2 })
        loop.run { context in
            guard let publisher = try? RedisConnection(address: address, on: context) else { return }
            for (channel, byte) in [("a", UInt8(0)), ("b", 13), ("c", 255)] {
                publisher.publish(channel: Array(channel.utf8), message: [byte, 10]) { result in
                    if case .success(.integer(let count)) = result { receivers.withLock { $0.append(count) } }
                }
            }
            context.attach(PublisherHolder(publisher))
        }
        #expect(eventually { received.withLock { $0.count } == 2 && receivers.withLock { $0.count } == 3 })
        #expect(received.withLock { $0 } == ["a=0.10", "b=13.10"])
        #expect(receivers.withLock { $0 } == [1, 1, 0])
    }

    @Test("closing fails pending commands with .closed; a refused connect reports its error")
    func closeAndRefuse() throws {
        let server = try RedisServer()
        let port = server.port
        let loop = try TestLoop()
        defer { loop.stop() }
        let outcomes = Mutex<[String]>([])
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        loop.run { context in
            guard let connection = try? RedisConnection(address: address, on: context) else { return }
            connection.send(["BLPOP", "nothing", "5"]) { result in
                if case .failure(.closed) = result { outcomes.withLock { $0.append("closed") } }
            }
            context.schedule(after: .milliseconds(100)) { connection.close() }
            connection.onClose = { error in outcomes.withLock { $0.append(error == nil ? "onClose(nil)" : "onClose(error)") } }
        }
        #expect(eventually { outcomes.withLock { $0.count } == 2 })
        #expect(outcomes.withLock { $0 } == ["closed", "onClose(nil)"])
        server.stop()
        let refused = Mutex<RedisError?>(nil)
        loop.run { context in
            do throws(RedisError) {
                let connection = try RedisConnection(address: address, on: context)
                connection.onClose = { error in refused.withLock { $0 = error } }
                connection.send(["PING"])
                context.attach(connection)
            } catch {
                refused.withLock { $0 = error }
            }
        }
        #expect(eventually { refused.withLock { $0 } != nil })
    }

    @Test("redis:// addresses parse with default port and database")
    func addresses() {
        #expect(RedisAddress(url: "redis://cache.local") == RedisAddress(host: "cache.local", port: 6379))
        #expect(RedisAddress(url: "redis://127.0.0.1:7001/3") == RedisAddress(host: "127.0.0.1", port: 7001, database: 3))
        #expect(RedisAddress(url: "redis://[::1]:7002") == RedisAddress(host: "::1", port: 7002))
        #expect(RedisAddress(url: "redis://") == nil)
        #expect(RedisAddress(url: "http://x") == nil)
        #expect(RedisAddress(url: "redis://h:99999") == nil)
        #expect(RedisAddress(host: "127.0.0.1", port: 7001, database: 3).description == "redis://127.0.0.1:7001/3")
    }

    @Test("commands encode as RESP arrays of bulk strings")
    func encoding() {
        var buffer: [UInt8] = []
        RedisCommandEncoder.append(["SET", "k", ""], to: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n")
        buffer = []
        RedisCommandEncoder.appendPublish(channel: Array("ch".utf8), message: Array(repeating: 65, count: 12), to: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == "*3\r\n$7\r\nPUBLISH\r\n$2\r\nch\r\n$12\r\nAAAAAAAAAAAA\r\n")
    }
}

/// Keeps a second connection attached beside the first (attachments are one per type).
final class PublisherHolder {
    let connection: RedisConnection
    init(_ connection: RedisConnection) { self.connection = connection }
}

/// An event loop on its own thread for a test.
final class TestLoop: Sendable {
    let loop: EventLoop

    init() throws {
        loop = try EventLoop(id: 7)
        let loop = self.loop
        Thread { try? loop.run() }.start()
    }

    func run(_ job: @escaping @Sendable (LoopContext) -> Void) { loop.execute(job) }

    func stop() { loop.stop() }
}
