import LonglinkLoop
import LonglinkTestSupport
import Testing

extension TransportContractFactory {
    /// `PlainTransport` on both sides.
    static let plain = TransportContractFactory(name: "tcp", server: PlainTransportFactory(), client: PlainTransportFactory())
}

@Suite("PlainTransport contract on real loopback sockets")
struct PlainTransportContractTests {
    @Test("keeps the Transport contract", arguments: TransportContract.checks)
    func contract(_ check: TransportContractCheck) throws { try check.run(.plain) }
}
