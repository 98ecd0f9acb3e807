import LonglinkLoop
import LonglinkOpenSSL

extension ClientTLS {
    /// The TLS transport factory these settings describe (OpenSSL stays inside LonglinkOpenSSL).
    func makeTransportFactory() throws(ClientTLSError) -> any TransportFactory {
        let trust: TLSConfiguration.Trust =
            switch self.trust {
            case .system: .system
            case .caFile(let path): .caFile(path)
            case .caPEM(let bytes): .caPEM(bytes)
            case .insecureNoVerification: .insecureNoVerification
            }
        let configuration = TLSConfiguration.client(
            trust: trust,
            certificateFile: clientCertificate?.certificateFile,
            privateKeyFile: clientCertificate?.privateKeyFile,
            pinnedPublicKeySHA256: pinnedPublicKeys.map(\.sha256),
            maximumVersion: maximumVersion == .tls12 ? .tls12 : .tls13,
            resumesSessions: resumesSessions
        )
        do {
            return TLSTransportFactory(context: try TLSContext(configuration))
        } catch {
            throw ClientTLSError(error.reason)
        }
    }
}
