import LonglinkClient
import LonglinkCore

/// `longlink publish`: one order change, for backends and people. Exit codes are `ClientExitCode`'s: 0 stored,
/// 1 refused (the typed error is printed), 2 usage, 3 unreachable or no answer, 4 wrong endpoint (TLS), 5 token
/// refused. A connection that cannot be made fails at once with its reason.
public enum PublishCommand {
    /// The command.
    public static let command = Command(
        name: "publish",
        summary: "publish one order-state change and print the stored position or the typed error",
        usage: "--order ID --line LINE --state STATE [fields]",
        details: """
            The idempotency key (--idempotency-key, random by default) makes a retry safe: the same key with the same
            change answers with the first result; the same key with a different change is refused
            (idempotency_conflict) and nothing is stored.
            """ + "\n" + ClientExitCode.help,
        maximumPositionals: 0,
        options: ClientOptions.specs + [
            OptionSpec("order", valueName: "ID", help: "order id", configurable: false),
            OptionSpec("line", default: "taxi", valueName: "LINE", help: "business line", configurable: false),
            OptionSpec("state", valueName: "STATE", help: "target state", configurable: false),
            OptionSpec("driver", valueName: "ID", help: "driver id", configurable: false),
            OptionSpec("eta", valueName: "SECONDS", help: "ETA in seconds", configurable: false),
            OptionSpec("lat", valueName: "DEGREES", help: "latitude", configurable: false),
            OptionSpec("lon", valueName: "DEGREES", help: "longitude", configurable: false),
            OptionSpec("reason", valueName: "TEXT", help: "cancellation reason", configurable: false),
            OptionSpec("payload", valueName: "TEXT", help: "opaque payload (UTF-8 text)", configurable: false),
            OptionSpec("idempotency-key", valueName: "KEY", help: "idempotency key (default: random)", configurable: false),
            OptionSpec("receipts", kind: .flag, help: "wait for the first subscriber's delivery receipt", configurable: false),
        ]
    ) { options, context in
        let change = try makeChange(options)
        let client = try ClientOptions.makeClient(options, name: "publish", io: context.io)
        defer { client.close() }
        let receipts = options.flag("receipts") ? client.receipts() : nil
        try await ClientOptions.connect(client, options)
        let receipt: PublishReceipt
        do throws(ClientError) {
            receipt = try await client.publish(change, wantsReceipts: options.flag("receipts"))
        } catch {
            throw ClientOptions.failure(error, options)
        }
        context.io.out(
            "stored \(change.route) at \(receipt.position) → \(change.targetState)"
                + (receipt.deduplicated ? " (duplicate key: first result)" : "")
        )
        if let receipts {
            let timeout = try options.duration("timeout") ?? .seconds(10)
            if let first = await firstReceipt(receipts, timeout: timeout) {
                context.io.out("delivered to \(first.subscriberID) (\(first.ackedCount) acked)")
            } else {
                context.io.err("no delivery receipt within \(timeout)")
            }
        }
        return 0
    }

    static func makeChange(_ options: ResolvedOptions) throws(CommandLineError) -> OrderChange {
        let idText = try options.required("order")
        guard let id = OrderID(idText) else { throw CommandLineError("--order '\(idText)' is not a valid order id ([A-Za-z0-9_.-], 1-64)") }
        let lineText = try options.required("line")
        guard let line = BusinessLine(lineText) else { throw CommandLineError("--line '\(lineText)' is not a valid line name") }
        var fields = OrderFields()
        fields.driverID = options.string("driver")
        if let eta = try options.int("eta") {
            guard let value = UInt32(exactly: eta) else { throw CommandLineError("--eta must be 0 or more seconds") }
            fields.etaSeconds = value
        }
        let lat = try options.double("lat")
        let lon = try options.double("lon")
        if lat != nil || lon != nil {
            guard let lat, let lon, abs(lat) <= 90, abs(lon) <= 180 else {
                throw CommandLineError("--lat and --lon go together, within ±90 and ±180 degrees")
            }
            fields.location = GeoPoint(latitudeE6: Int32((lat * 1e6).rounded()), longitudeE6: Int32((lon * 1e6).rounded()))
        }
        fields.cancellationReason = options.string("reason")
        if let payload = options.string("payload") { fields.payload = Array(payload.utf8) }
        return OrderChange(
            orderID: id,
            line: line,
            targetState: OrderState(try options.required("state")),
            fields: fields,
            idempotencyKey: options.string("idempotency-key") ?? ""
        )
    }

    static func firstReceipt(_ stream: AsyncStream<DeliveryReceipt>, timeout: Duration) async -> DeliveryReceipt? {
        await withTaskGroup(of: DeliveryReceipt?.self) { group in
            group.addTask {
                for await receipt in stream { return receipt }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
