/// Readable renderings of the values an app prints: `print(change)` shows the route, the position, the
/// transition and the fields, not the shared storage boxes inside. `description` is one line for people;
/// `debugDescription` lists every property by name, for logs and test failures.

extension OrderFields: CustomStringConvertible, CustomDebugStringConvertible {
    /// `driver=d-7 eta=180s loc=31.230416,121.473701 reason="no show" payload=12B` (only the set fields), or
    /// `no fields`.
    public var description: String {
        var parts: [String] = []
        if let driverID { parts.append("driver=\(driverID)") }
        if let etaSeconds { parts.append("eta=\(etaSeconds)s") }
        if let location { parts.append("loc=\(location)") }
        if let cancellationReason { parts.append("reason=\"\(cancellationReason)\"") }
        if !payload.isEmpty { parts.append("payload=\(payload.count)B") }
        if let toggle { parts.append("value=\(toggle)") }
        return parts.isEmpty ? "no fields" : parts.joined(separator: " ")
    }

    public var debugDescription: String { "OrderFields(\(description))" }

    /// The fields after a space, or nothing when none is set.
    var suffix: String { isEmpty ? "" : " " + description }
}

extension OrderChange: CustomStringConvertible, CustomDebugStringConvertible {
    /// `order://taxi/8812 → driver_assigned driver=d-7 (key 3f2a…)`.
    public var description: String {
        "\(route) → \(targetState)\(fields.suffix)" + (idempotencyKey.isEmpty ? "" : " (key \(idempotencyKey))")
    }

    public var debugDescription: String {
        "OrderChange(route: \(route), targetState: \(targetState), fields: \(fields), idempotencyKey: \"\(idempotencyKey)\")"
    }
}

extension OrderChangeRecord: CustomStringConvertible, CustomDebugStringConvertible {
    /// `order://taxi/8812 1700000000:3 dispatching → driver_assigned driver=d-7 at 2024-11-29T18:26:40.000Z`.
    public var description: String {
        "\(route) \(position) \(fromState?.name ?? "∅") → \(toState)\(fields.suffix) at \(TimestampText.iso8601(millis: timestampMillis))"
    }

    public var debugDescription: String {
        "OrderChangeRecord(route: \(route), position: \(position), from: \(fromState?.name ?? "nil"), to: \(toState), "
            + "fields: \(fields), timestamp: \(TimestampText.iso8601(millis: timestampMillis)), idempotencyKey: \"\(idempotencyKey)\")"
    }
}

extension OrderSnapshot: CustomStringConvertible, CustomDebugStringConvertible {
    /// `order://taxi/8812 1700000000:3 driver_assigned driver=d-7 eta=240s (updated 2024-11-29T18:26:40.000Z)`.
    public var description: String {
        "\(route) \(position) \(state)\(fields.suffix) (updated \(TimestampText.iso8601(millis: updatedAtMillis)))"
    }

    public var debugDescription: String {
        "OrderSnapshot(route: \(route), position: \(position), state: \(state), fields: \(fields), "
            + "created: \(TimestampText.iso8601(millis: createdAtMillis)), updated: \(TimestampText.iso8601(millis: updatedAtMillis)))"
    }
}

extension ContentChange: CustomStringConvertible, CustomDebugStringConvertible {
    /// `change order://taxi/8812 1700000000:3 dispatching → driver_assigned driver=d-7`, or
    /// `snapshot order://taxi/8812 1700000000:3 driver_assigned driver=d-7 eta=240s` (`resync` likewise).
    public var description: String {
        switch kind {
        case .change:
            "change \(route) \(record.position) \(record.fromState?.name ?? "∅") → \(record.toState)\(record.fields.suffix)"
        case .snapshot, .resync:
            "\(kind) \(route) \(snapshot.position) \(snapshot.state)\(snapshot.fields.suffix)"
        }
    }

    public var debugDescription: String {
        "ContentChange(kind: \(kind), route: \(route), record: \(record.debugDescription), snapshot: \(snapshot.debugDescription))"
    }
}

extension ContentChange.Kind: CustomStringConvertible {
    public var description: String {
        switch self {
        case .change: "change"
        case .snapshot: "snapshot"
        case .resync: "resync"
        }
    }
}

extension FeatureToggle: CustomStringConvertible, CustomDebugStringConvertible {
    /// `config://rider/new_home_screen = 25% (1700000000:3)`.
    public var description: String { "\(route) = \(value) (\(position))" }

    public var debugDescription: String {
        "FeatureToggle(route: \(route), value: \(value), position: \(position), updated: \(TimestampText.iso8601(millis: updatedAtMillis)))"
    }
}

/// Timestamps in messages, without Foundation: milliseconds since the Unix epoch as ISO 8601 UTC.
public enum TimestampText {
    /// `2024-11-29T18:26:40.123Z` (Howard Hinnant's civil-from-days, valid for any date after 1970).
    public static func iso8601(millis: UInt64) -> String {
        let seconds = Int64(millis / 1000)
        let days = seconds / 86_400
        let secondOfDay = seconds % 86_400
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay % 3600 / 60, 2)):"
            + "\(pad(secondOfDay % 60, 2)).\(pad(Int64(millis % 1000), 3))Z"
    }
}
