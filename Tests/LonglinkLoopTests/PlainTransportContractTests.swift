import LonglinkLoop
import LonglinkTestSupport
import Testing

extension TransportContractFactory {
    /// `PlainTransport` on both sides.
    static let plain = TransportContractFactory(name: "tcp", server: PlainTransportFactory(), client: PlainTransportFactory())
}

@Suite("PlainTransport contract on real loopback sockets", .ownThreads)
struct PlainTransportContractTests {
    @Test("keeps the Transport contract", arguments: TransportContract.checks)
    func contract(_ check: TransportContractCheck) throws { try check.run(.plain) }

    @Test("each check fails on a transport with the fault it is there to catch", arguments: TransportContract.faultCases(refusing: false))
    func catchesItsFault(_ check: TransportContractCheck, _ fault: TransportFault) {
        withKnownIssue("a PlainTransport that \(fault) must fail this check") { try check.run(TransportContractFactory.plain.broken(by: fault)) }
    }
}
