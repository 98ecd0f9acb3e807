/// An immutable heap cell holding one value: what lets a large value type be copied by one retain.
@usableFromInline
final class ValueBox<Value: Sendable>: Sendable {
    @usableFromInline let value: Value
    @usableFromInline init(_ value: Value) { self.value = value }
}

extension ValueBox {
    /// Replaces `box` with a new box holding its value changed by `change` (the old box may be shared).
    static func update(_ box: inout ValueBox<Value>, _ change: (inout Value) -> Void) {
        var value = box.value
        change(&value)
        box = ValueBox(value)
    }
}
