import LonglinkClient
import LonglinkCore

/// The exit codes of the client commands (`publish`, `subscribe`, `orders`, `simulate`), as the README documents
/// them, and the one place a `ClientError` becomes a message and a code.
enum ClientExitCode {
    /// The gateway refused the request (the typed error is printed: illegal_transition, unknown_state,
    /// idempotency_conflict, permission_denied, unknown_line, ...).
    static let refused: Int32 = 1
    /// A usage mistake (unknown option, missing value, extra argument).
    static let usage: Int32 = 2
    /// The gateway could not be reached or did not answer: connection refused, host not found, no answer in time,
    /// connection lost, shutting down, at its connection limit.
    static let unreachable: Int32 = 3
    /// The endpoint is not what the options say: TLS failed (certificate verify failed, not a TLS endpoint) or the
    /// peer does not speak Longlink (e.g. a TLS port spoken to without --tls).
    static let endpoint: Int32 = 4
    /// The gateway refused the token: invalid token, token expired.
    static let authentication: Int32 = 5

    /// The exit code for a connection failure.
    static func code(for failure: ConnectionFailure) -> Int32 {
        switch failure {
        case .authentication: authentication
        case .tls, .notLonglink: endpoint
        case .connectionRefused, .hostNotFound, .network, .timedOut, .connectionLost, .serverShuttingDown, .tooManyConnections,
            .disconnected:
            unreachable
        }
    }

    /// The message and exit code for a failed client call against `server`.
    static func failure(_ error: ClientError, server: String) -> CommandFailure {
        switch error {
        case .refused(let frame):
            return CommandFailure("refused: \(frame)", exitCode: refused)
        case .timeout:
            return CommandFailure("\(server): no answer from the gateway in time", exitCode: unreachable)
        case .closed:
            return CommandFailure("\(server): the connection was closed", exitCode: unreachable)
        case .connectionFailed(let failure):
            switch failure {
            case .connectionRefused, .hostNotFound:
                return CommandFailure("\(failure)", exitCode: code(for: failure))
            default:
                return CommandFailure("\(server): \(failure)", exitCode: code(for: failure))
            }
        }
    }

    /// The README's table of these codes, for `--help`.
    static let help = """
        exit codes: 0 done; 1 refused by the gateway (typed error printed); 2 usage; 3 gateway unreachable or no
        answer (connection refused, host not found, timeout); 4 wrong endpoint (TLS: certificate verify failed, not a
        TLS or not a Longlink endpoint); 5 token refused (invalid token, token expired)
        """
}
