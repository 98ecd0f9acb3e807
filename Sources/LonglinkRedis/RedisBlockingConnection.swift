internal import CLonglinkHiredis

/// A blocking connection for one-off commands (set-up, inspection, tests): hiredis's `redisContext` with
/// `redisCommandArgv`. Each call blocks the calling thread until the reply (or the timeout); use `RedisConnection`
/// on an event loop for anything on a hot path. Not thread-safe: one thread at a time.
public final class RedisBlockingConnection {
    private let context: UnsafeMutablePointer<redisContext>
    /// Where it is connected.
    public let address: RedisAddress

    /// Connects, authenticates with `password` when given (`AUTH`), and selects `address.database` when it is not
    /// 0; `timeout` bounds the connect and every command.
    public init(_ address: RedisAddress, password: String? = nil, timeout: Duration = .seconds(5)) throws(RedisError) {
        let millis = max(1, Int(timeout.components.seconds) * 1000 + Int(timeout.components.attoseconds / 1_000_000_000_000_000))
        guard let context = CLonglinkHiredis_connect(address.host, Int32(address.port), millis) else {
            throw .connect("out of memory")
        }
        if context.pointee.err != 0 {
            let why = String(cString: CLonglinkHiredis_contextError(context))
            redisFree(context)
            throw .connect("\(address): \(why)")
        }
        _ = CLonglinkHiredis_setTimeout(context, millis)
        self.context = context
        self.address = address
        if let password {
            _ = try command(["AUTH", password])
        }
        if address.database != 0 {
            _ = try command(["SELECT", String(address.database)])
        }
    }

    /// Whether the connection failed (an I/O error, a timeout or a close by the server): it cannot be used again.
    public var isBroken: Bool { context.pointee.err != 0 }

    deinit { redisFree(context) }

    /// Runs one command given as text arguments, e.g. `["CONFIG", "GET", "maxclients"]`.
    @discardableResult
    public func command(_ arguments: [String]) throws(RedisError) -> RedisReply {
        try command(bytes: arguments.map { Array($0.utf8) })
    }

    /// Runs one command with binary-safe arguments. An error reply is thrown as `RedisError.server`.
    @discardableResult
    public func command(bytes arguments: [[UInt8]]) throws(RedisError) -> RedisReply {
        try append(arguments)
        let reply = try nextReply()
        if case .error(let message) = reply { throw .server(message) }
        return reply
    }

    /// Sends several commands in one write and reads their replies in order (a pipeline: one round trip). Error
    /// replies come back as `.error` values in place; an I/O failure throws (the connection is then broken).
    public func pipeline(_ commands: [[[UInt8]]]) throws(RedisError) -> [RedisReply] {
        for arguments in commands { try append(arguments) }
        return try read(commands.count)
    }

    /// The first half of a pipeline: queues `commands` and writes them all, without reading any reply, so a caller
    /// can have several servers work at once (`RedisClusterClient` writes to every node, then reads each).
    public func write(_ commands: [[[UInt8]]]) throws(RedisError) {
        for arguments in commands { try append(arguments) }
        var done: Int32 = 0
        while done == 0 {
            guard redisBufferWrite(context, &done) == REDIS_OK else {
                throw .io(String(cString: CLonglinkHiredis_contextError(context)))
            }
        }
    }

    /// The second half of a pipeline: reads `count` replies in order (error replies in place).
    public func read(_ count: Int) throws(RedisError) -> [RedisReply] {
        var replies: [RedisReply] = []
        replies.reserveCapacity(count)
        for _ in 0..<count { replies.append(try nextReply()) }
        return replies
    }

    /// Queues one command in hiredis's output buffer (`redisAppendCommandArgv`); `nextReply` flushes it.
    private func append(_ arguments: [[UInt8]]) throws(RedisError) {
        precondition(!arguments.isEmpty, "a Redis command needs at least its name")
        // redisAppendCommandArgv wants `const char **` and lengths; copy the arguments into one C buffer for the call.
        let total = arguments.reduce(0) { $0 + $1.count }
        let storage = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, total))
        defer { storage.deallocate() }
        var pointers: [UnsafePointer<CChar>?] = []
        var lengths: [Int] = []
        pointers.reserveCapacity(arguments.count)
        lengths.reserveCapacity(arguments.count)
        var offset = 0
        for argument in arguments {
            argument.withUnsafeBytes { raw in
                if let base = raw.baseAddress {
                    (storage + offset).withMemoryRebound(to: UInt8.self, capacity: raw.count) {
                        $0.update(from: base.assumingMemoryBound(to: UInt8.self), count: raw.count)
                    }
                }
            }
            pointers.append(UnsafePointer(storage + offset))
            lengths.append(argument.count)
            offset += argument.count
        }
        guard redisAppendCommandArgv(context, Int32(arguments.count), &pointers, &lengths) == REDIS_OK else {
            throw .io(String(cString: CLonglinkHiredis_contextError(context)))
        }
    }

    /// Writes what is queued (first call) and reads the next reply.
    private func nextReply() throws(RedisError) -> RedisReply {
        var object: UnsafeMutableRawPointer?
        guard redisGetReply(context, &object) == REDIS_OK, let object else {
            throw .io(String(cString: CLonglinkHiredis_contextError(context)))
        }
        defer { freeReplyObject(object) }
        return RedisReply(object.assumingMemoryBound(to: redisReply.self))
    }
}

@available(*, unavailable)
extension RedisBlockingConnection: Sendable {}
