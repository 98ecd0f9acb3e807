import Glibc
import LonglinkCore
import LonglinkLoop
import LonglinkTestSupport
import Testing

/// Server side of the echo test: reads with a budget, queues what it read, writes, and asks for `.write` only
/// while a short write left bytes queued.
private final class EchoConnection: SelectorHandler {
    let transport: any Transport
    unowned let context: LoopContext
    var registration: RegistrationID!
    var input = ByteBuffer(capacity: 4096)
    var output = OutboundQueue()
    let stats: Shared<EchoStats>

    init(fd: CInt, context: LoopContext, stats: Shared<EchoStats>) throws {
        transport = try PlainTransportFactory().makeTransport(fd: fd, role: .accepted)
        self.context = context
        self.stats = stats
        registration = try context.register(fd: fd, interest: .read, handler: self)
    }

    func handleEvent(_ event: SelectorEvent) {
        do {
            if event.contains(.read) {
                readLoop: for _ in 0..<4 {  // read budget per event; level-triggered brings us back
                    switch try transport.read(into: &input) {
                    case .wouldBlock: break readLoop
                    case .processed(0): return close()
                    case .processed:
                        output.append(input.readableArray)
                        input.clear()
                    }
                }
            }
            _ = try transport.write(&output)
            let wanted: SelectorEvent = output.isEmpty ? .read : [.read, .write]
            if wanted.contains(.write) && !(context.interest(of: registration) ?? []).contains(.write) {
                stats.update { $0.writeInterestAdded += 1 }
            }
            try context.reregister(registration, interest: wanted)
        } catch {
            stats.update { $0.serverErrors += 1 }
            close()
        }
    }

    func close() {
        context.deregister(registration)
        transport.close()
        stats.update { $0.serverClosed += 1 }
    }
}

/// Client side: connects without blocking, sends its payload once connected, and checks the echo.
private final class EchoClient: SelectorHandler {
    let transport: any Transport
    unowned let context: LoopContext
    var registration: RegistrationID!
    let payload: [UInt8]
    var received: ByteBuffer
    var output = OutboundQueue()
    var connected = false
    let stats: Shared<EchoStats>

    init(address: SocketAddress, payload: [UInt8], context: LoopContext, stats: Shared<EchoStats>) throws {
        let (fd, connected) = try Socket.connect(to: address)
        transport = PlainTransport(fd: fd, connecting: !connected)
        self.payload = payload
        self.received = ByteBuffer(capacity: payload.count + 16 * 1024)
        self.context = context
        self.stats = stats
        registration = try context.register(fd: fd, interest: transport.interest.union(.read), handler: self)
        if connected { try start() }
    }

    func start() throws {
        connected = true
        output.append(payload)
        _ = try transport.write(&output)
        try context.reregister(registration, interest: output.isEmpty ? .read : [.read, .write])
    }

    func handleEvent(_ event: SelectorEvent) {
        do {
            if !connected {
                guard case .processed = try transport.handshake() else { return }
                try start()
                return
            }
            if event.contains(.read) {
                switch try transport.read(into: &received) {
                case .wouldBlock: break
                case .processed(0): return finish(ok: false)
                case .processed: if received.readableBytes >= payload.count { return finish(ok: received.readableArray == payload) }
                }
            }
            if event.contains(.write) {
                _ = try transport.write(&output)
                if output.isEmpty { try context.reregister(registration, interest: .read) }
            }
        } catch {
            finish(ok: false)
        }
    }

    func finish(ok: Bool) {
        context.deregister(registration)
        transport.close()
        stats.update { ok ? ($0.clientsDone += 1) : ($0.clientsFailed += 1) }
    }
}

struct EchoStats: Sendable {
    var clientsDone = 0
    var clientsFailed = 0
    var serverClosed = 0
    var serverErrors = 0
    var writeInterestAdded = 0
    var serverRegistrations = 0
    var accepted = 0
}

@Suite("Echo", .ownThreads)
struct EchoTests {
    @Test("one loop echoes 1,000 concurrent loopback connections byte for byte")
    func thousandConnections() throws {
        let connections = 1_000
        let group = try EventLoopGroup(numberOfThreads: 2)
        defer { group.shutdownGracefully() }
        let stats = Shared(EchoStats())
        let port = Shared(0)

        // Loop 0: the listener and every server-side connection.
        group.loops[0].execute { context in
            let listener = try! Listener.bind(host: "127.0.0.1", port: 0, on: context, backlog: 2048) { fd in
                stats.update { $0.accepted += 1 }
                _ = try! EchoConnection(fd: fd, context: context, stats: stats)
            }
            port.update { $0 = listener.port }
            context.schedule(every: .milliseconds(50)) {
                let count = context.registrationCount
                stats.update { $0.serverRegistrations = max($0.serverRegistrations, count) }
            }
        }
        #expect(eventually { port.value != 0 })
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: port.value)

        // Loop 1: all clients at once, each with its own payload (some longer than one read).
        group.loops[1].execute { context in
            for index in 0..<connections {
                let text = "client \(index) "
                let repeats = index % 10 == 0 ? 3_000 : 20
                let payload = Array(String(repeating: text, count: repeats).utf8)
                _ = try! EchoClient(address: address, payload: payload, context: context, stats: stats)
            }
        }

        #expect(eventually(timeout: .seconds(60)) { stats.value.clientsDone + stats.value.clientsFailed == connections })
        let final = stats.value
        #expect(final.clientsDone == connections)
        #expect(final.clientsFailed == 0)
        #expect(final.accepted == connections)
        #expect(final.serverErrors == 0)
        #expect(eventually { stats.value.serverClosed == connections })
        #expect(final.serverRegistrations > 1)
    }
}
