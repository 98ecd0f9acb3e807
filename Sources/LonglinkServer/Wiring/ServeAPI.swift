import LonglinkCore
import LonglinkGateway
import LonglinkOperations
import LonglinkStores

/// Starts the backend HTTP API of `serve` on the Store's writer (the same access the admin API uses).
enum ServeAPI {
    static func start(
        _ listen: HostPort,
        limits: APIServer.Configuration,
        gateway: Gateway,
        writer: StoreWriter,
        authorizer: any Authorizer,
        logger: Logger
    ) throws -> APIServer {
        let server = APIServer(
            gateway: gateway,
            writer: writer,
            authorizer: authorizer,
            configuration: limits,
            logger: logger.labeled("api")
        )
        do {
            try server.start(host: listen.host, port: Int(listen.port))
        } catch {
            throw ServerFailure("\(ListenFailure(address: "\(listen)", error: error)) (--api-listen)")
        }
        return server
    }
}
