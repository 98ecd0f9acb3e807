import LonglinkCore
public import LonglinkLoop

/// A deliberately broken transport, to show that each `TransportContract` check fails on the fault it is there
/// to catch (the contract's own test: `TransportContract.faultCases`).
public enum TransportFault: Hashable, Sendable, CustomStringConvertible {
    /// The first read reports the end of the stream.
    case endsEarly
    /// A write that leaves bytes queued also throws away up to 100 of them.
    case dropsAfterPartialWrite
    /// The end of the stream reads as "nothing yet".
    case swallowsEnd
    /// Errors from handshake, read and write become "would block".
    case hidesErrors
    /// After `close()`, read and write report "would block" instead of throwing `.closed`.
    case usableAfterClose

    public var description: String {
        switch self {
        case .endsEarly: "ends early"
        case .dropsAfterPartialWrite: "drops bytes after a partial write"
        case .swallowsEnd: "swallows the end of the stream"
        case .hidesErrors: "hides errors"
        case .usableAfterClose: "usable after close"
        }
    }
}

/// Makes `inner`'s transports, each broken by `fault`.
public struct FaultyTransportFactory: TransportFactory {
    /// The working factory.
    public let inner: any TransportFactory
    /// What is broken.
    public let fault: TransportFault

    public init(_ inner: any TransportFactory, fault: TransportFault) {
        self.inner = inner
        self.fault = fault
    }

    public func makeTransport(fd: CInt, role: TransportRole) throws(TransportError) -> any Transport {
        FaultyTransport(try inner.makeTransport(fd: fd, role: role), fault: fault)
    }
}

/// `inner` with one fault.
final class FaultyTransport: Transport {
    private let inner: any Transport
    private let fault: TransportFault
    private var reads = 0
    private var closed = false

    init(_ inner: any Transport, fault: TransportFault) {
        self.inner = inner
        self.fault = fault
    }

    var fd: CInt { inner.fd }
    var interest: SelectorEvent { inner.interest }
    var messageFramer: (any MessageFramer.Type)? { inner.messageFramer }

    func handshake() throws(TransportError) -> IOResult<Void> {
        do {
            return try inner.handshake()
        } catch {
            if fault == .hidesErrors { return .wouldBlock }
            throw error
        }
    }

    func read(into buffer: inout ByteBuffer) throws(TransportError) -> IOResult<Int> {
        if closed && fault == .usableAfterClose { return .wouldBlock }
        reads += 1
        if fault == .endsEarly && reads == 1 { return .processed(0) }
        do {
            let result = try inner.read(into: &buffer)
            if fault == .swallowsEnd, case .processed(0) = result { return .wouldBlock }
            return result
        } catch {
            if fault == .hidesErrors { return .wouldBlock }
            throw error
        }
    }

    func write(_ queue: inout OutboundQueue) throws(TransportError) -> IOResult<Int> {
        if closed && fault == .usableAfterClose { return .wouldBlock }
        do {
            let result = try inner.write(&queue)
            if fault == .dropsAfterPartialWrite && !queue.isEmpty { queue.consume(min(100, queue.queuedBytes)) }
            return result
        } catch {
            if fault == .hidesErrors { return .wouldBlock }
            throw error
        }
    }

    func close() {
        closed = true
        inner.close()
    }
}

@available(*, unavailable)
extension FaultyTransport: Sendable {}

extension TransportContractFactory {
    /// This kind's factories (refused client included), broken by `fault`.
    public func broken(by fault: TransportFault) -> TransportContractFactory {
        TransportContractFactory(
            name: "\(name) that \(fault)",
            server: FaultyTransportFactory(server, fault: fault),
            client: FaultyTransportFactory(client, fault: fault),
            refusedClient: refusedClient.map { FaultyTransportFactory($0, fault: fault) },
            halfCloseIsTruncation: halfCloseIsTruncation
        )
    }
}

extension TransportContract {
    /// A fault for each check that it must catch: run each check against a transport broken so and expect it to
    /// fail (`withKnownIssue`). `refusing`: whether the kind has a refused client (the refused-handshake check has
    /// nothing to catch without one).
    public static func faultCases(refusing: Bool) -> [(TransportContractCheck, TransportFault)] {
        let faults: [TransportFault] = [
            .endsEarly, .dropsAfterPartialWrite, .dropsAfterPartialWrite, .swallowsEnd, .swallowsEnd, .hidesErrors,
            .usableAfterClose, .hidesErrors, .hidesErrors,
        ]
        precondition(faults.count == checks.count, "a fault per check")
        let cases = Array(zip(checks, faults))
        return refusing ? cases : Array(cases.dropLast())
    }
}
