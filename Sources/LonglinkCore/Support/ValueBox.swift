/// An immutable heap cell holding one value: what lets a large value type be copied by one retain.
final class ValueBox<Value: Sendable>: Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
