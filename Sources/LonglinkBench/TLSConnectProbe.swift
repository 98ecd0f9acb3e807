import LonglinkCore
import LonglinkLoop
import LonglinkProtobuf

/// A connection that only connects over TLS (TCP connect, TLS handshake, Longlink `connect` → `connected`), for
/// `longlink bench connect --tls`. It drives a `Transport` made by the client TLS factory, so the measured latency
/// is TCP + TLS + Longlink handshake. Frames after `connected` are dropped unread (the scenario closes at once).
/// Loop-confined.
final class TLSConnectProbe: SelectorHandler, BenchSubscriber {
    private enum State { case handshaking, waitingForConnected, open, closed }

    private unowned let context: LoopContext
    private let counters: BenchCounters
    private let recorder: LoopRecorder
    private let settled: () -> Void
    private let startedAt = MonotonicClock.nanoseconds()
    private var transport: (any Transport)?
    private var registration: RegistrationID?
    private var state = State.handshaking
    private var inbound = ByteBuffer(capacity: 512)
    private var outbound = OutboundQueue()
    private var closing = false
    private static let codec = ProtobufFrameCodec()
    private static let reader = FrameReader(maxFrameSize: 1 << 20)

    init(address: SocketAddress, factory: any TransportFactory, context: LoopContext, counters: BenchCounters, settled: @escaping () -> Void) {
        self.context = context
        self.counters = counters
        self.recorder = context.attachment(LoopRecorder.self)!
        self.settled = settled
        let fd: CInt
        do {
            fd = try Socket.connect(to: address).fd
        } catch {
            counters.fail("connect: \(BenchConnection.reason(error))")
            state = .closed
            return
        }
        do throws(TransportError) {
            let transport = try factory.makeTransport(fd: fd, role: .connecting(serverName: nil))
            self.transport = transport
        } catch {
            Socket.close(fd)
            counters.fail("tls: \(error.reason)")
            state = .closed
            return
        }
        do {
            registration = try context.register(fd: fd, interest: .write, handler: self)
        } catch {
            transport?.close()
            transport = nil
            counters.fail("epoll: \(error)")
            state = .closed
            return
        }
        outbound.append(LonglinkFrames.connect)
    }

    var failedToStart: Bool { registration == nil && !closing }

    func close() {
        closing = true
        shutDown(nil)
    }

    func handleEvent(_ event: SelectorEvent) {
        guard let transport, state != .closed else { return }
        do throws(TransportError) {
            if state == .handshaking {
                guard case .processed = try transport.handshake() else { return updateInterest() }
                state = .waitingForConnected
            }
            if !outbound.isEmpty {
                while !outbound.isEmpty, case .processed = try transport.write(&outbound) {}
            }
            if event.contains(.read) || !event.isDisjoint(with: [.readEOF, .reset, .error]) || state == .waitingForConnected {
                try readAvailable(transport)
            }
        } catch {
            return shutDown(error.kind == .protocolFailure ? "tls: \(error.reason)" : "\(error.kind): \(error.reason)")
        }
        updateInterest()
    }

    private func readAvailable(_ transport: any Transport) throws(TransportError) {
        for _ in 0..<8 where state != .closed {
            guard case .processed(let count) = try transport.read(into: &inbound) else { return }
            guard count > 0 else { return shutDown("closed by server") }
            guard state == .waitingForConnected else {
                inbound.clear()
                continue
            }
            do throws(FrameError) {
                while state == .waitingForConnected, let frame = try Self.codec.decodeNextServerFrame(from: &inbound, reader: Self.reader) {
                    handle(frame)
                }
            } catch {
                return shutDown("bad frame: \(error)")
            }
        }
    }

    private func handle(_ frame: ServerFrame) {
        switch frame {
        case .connected:
            state = .open
            inbound.clear()
            counters.connected.add(1)
            recorder.connect.record(MonotonicClock.nanoseconds() &- startedAt)
            settled()
        case .disconnect(let disconnect):
            shutDown("disconnected: \(disconnect.code)")
        default:
            break
        }
    }

    private func updateInterest() {
        guard state != .closed, let registration, let transport else { return }
        var interest = transport.interest
        if state != .handshaking {
            interest.formUnion(.read)
            if !outbound.isEmpty { interest.formUnion(.write) }
        }
        do {
            try context.reregister(registration, interest: interest)
        } catch {
            shutDown("epoll: \(error)")
        }
    }

    private func shutDown(_ error: String?) {
        guard state != .closed || transport != nil else { return }
        state = .closed
        if let registration { context.deregister(registration) }
        registration = nil
        transport?.close()
        transport = nil
        outbound.removeAll()
        guard let error, !closing else { return }
        counters.fail(error)
        settled()
    }
}

@available(*, unavailable)
extension TLSConnectProbe: Sendable {}
