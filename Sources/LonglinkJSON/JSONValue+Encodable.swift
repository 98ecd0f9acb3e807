/// `Encodable` types written as JSON without Foundation. Members keep the order they are encoded in (sort them when
/// printing); nil optionals are left out, as Foundation's `JSONEncoder` leaves them.
extension JSONValue {
    /// The value tree of `value`; an `EncodingError` for a number JSON cannot carry (infinity, NaN).
    public static func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let root = JSONEncodingNode()
        try value.encode(to: JSONValueEncoder(node: root, codingPath: []))
        return root.value
    }
}

/// One value being built; containers write into it (encoders hand out containers that share it).
final class JSONEncodingNode {
    enum Content {
        case unset
        case single(JSONValue)
        case object([(String, JSONEncodingNode)])
        case array([JSONEncodingNode])
    }

    var content = Content.unset

    /// The finished value (a value that encoded nothing is an empty object, as with `JSONEncoder`).
    var value: JSONValue {
        switch content {
        case .unset: .object([])
        case .single(let value): value
        case .object(let members): .object(members.map { ($0.0, $0.1.value) })
        case .array(let elements): .array(elements.map(\.value))
        }
    }

    /// A new member `name` (replacing one of the same name, as `JSONEncoder` does).
    func member(_ name: String) -> JSONEncodingNode {
        var members: [(String, JSONEncodingNode)] = []
        if case .object(let existing) = content { members = existing }
        let child = JSONEncodingNode()
        if let index = members.firstIndex(where: { $0.0 == name }) {
            members[index].1 = child
        } else {
            members.append((name, child))
        }
        content = .object(members)
        return child
    }

    /// A new last element.
    func element() -> JSONEncodingNode {
        var elements: [JSONEncodingNode] = []
        if case .array(let existing) = content { elements = existing }
        let child = JSONEncodingNode()
        elements.append(child)
        content = .array(elements)
        return child
    }

    /// Makes this node an object (empty until members are added).
    func becomeObject() { if case .object = content {} else { content = .object([]) } }

    /// Makes this node an array (empty until elements are added).
    func becomeArray() { if case .array = content {} else { content = .array([]) } }

    /// How many elements it has as an array.
    var elementCount: Int { if case .array(let elements) = content { elements.count } else { 0 } }
}

@available(*, unavailable)
extension JSONEncodingNode: Sendable {}

/// Encodes one value of the tree into its node.
struct JSONValueEncoder: Encoder {
    let node: JSONEncodingNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(JSONKeyedEncoding<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return JSONUnkeyedEncoding(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }
}

extension JSONValueEncoder: SingleValueEncodingContainer {
    func encodeNil() { node.content = .single(.null) }
    func encode(_ value: Bool) { node.content = .single(.bool(value)) }
    func encode(_ value: String) { node.content = .single(.string(value)) }

    func encode(_ value: Double) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(codingPath: codingPath, debugDescription: "\(value) is not a JSON number")
            )
        }
        node.content = .single(.double(value))
    }

    /// A float as the decimal it prints as (`0.1`, not the double `0.10000000149011612`).
    func encode(_ value: Float) throws { try encode(Double("\(value)") ?? Double(value)) }

    func encode(_ value: Int) { integer(value) }
    func encode(_ value: Int8) { integer(value) }
    func encode(_ value: Int16) { integer(value) }
    func encode(_ value: Int32) { integer(value) }
    func encode(_ value: Int64) { integer(value) }
    func encode(_ value: UInt) { integer(value) }
    func encode(_ value: UInt8) { integer(value) }
    func encode(_ value: UInt16) { integer(value) }
    func encode(_ value: UInt32) { integer(value) }
    func encode(_ value: UInt64) { integer(value) }

    func encode<T: Encodable>(_ value: T) throws { try value.encode(to: self) }

    private func integer<T: FixedWidthInteger>(_ value: T) {
        node.content = .single(Int64(exactly: value).map(JSONValue.int) ?? .uint(UInt64(value)))
    }
}

/// Writes the members of one object.
struct JSONKeyedEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: JSONEncodingNode
    let codingPath: [any CodingKey]

    private func member(_ key: Key) -> JSONValueEncoder {
        JSONValueEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key])
    }

    mutating func encodeNil(forKey key: Key) { member(key).encodeNil() }
    mutating func encode(_ value: Bool, forKey key: Key) { member(key).encode(value) }
    mutating func encode(_ value: String, forKey key: Key) { member(key).encode(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode(_ value: Int, forKey key: Key) { member(key).encode(value) }
    mutating func encode(_ value: Int8, forKey key: Key) { member(key).encode(value) }
    mutating func encode(_ value: Int16, forKey key: Key) { member(key).encode(value) }
    mutating func encode(_ value: Int32, forKey key: Key) { member(key).encode(value) }
    mutating func encode(_ value: Int64, forKey key: Key) { member(key).encode(value) }
    mutating func encode(_ value: UInt, forKey key: Key) { member(key).encode(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) { member(key).encode(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) { member(key).encode(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) { member(key).encode(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) { member(key).encode(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try value.encode(to: member(key)) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        member(key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        member(key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        JSONValueEncoder(node: node.member("super"), codingPath: codingPath + [JSONNameKey("super")])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder { member(key) }
}

/// Appends the elements of one array.
struct JSONUnkeyedEncoding: UnkeyedEncodingContainer {
    let node: JSONEncodingNode
    let codingPath: [any CodingKey]

    var count: Int { node.elementCount }

    private func element() -> JSONValueEncoder {
        let index = node.elementCount
        return JSONValueEncoder(node: node.element(), codingPath: codingPath + [JSONIndexKey(index)])
    }

    mutating func encodeNil() { element().encodeNil() }
    mutating func encode(_ value: Bool) { element().encode(value) }
    mutating func encode(_ value: String) { element().encode(value) }
    mutating func encode(_ value: Double) throws { try element().encode(value) }
    mutating func encode(_ value: Float) throws { try element().encode(value) }
    mutating func encode(_ value: Int) { element().encode(value) }
    mutating func encode(_ value: Int8) { element().encode(value) }
    mutating func encode(_ value: Int16) { element().encode(value) }
    mutating func encode(_ value: Int32) { element().encode(value) }
    mutating func encode(_ value: Int64) { element().encode(value) }
    mutating func encode(_ value: UInt) { element().encode(value) }
    mutating func encode(_ value: UInt8) { element().encode(value) }
    mutating func encode(_ value: UInt16) { element().encode(value) }
    mutating func encode(_ value: UInt32) { element().encode(value) }
    mutating func encode(_ value: UInt64) { element().encode(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try value.encode(to: element()) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        element().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { element().unkeyedContainer() }

    mutating func superEncoder() -> any Encoder { element() }
}
