public import LonglinkJSON

/// The JSON of every `data:` line a Server-Sent Events client has received so far.
public func events(_ client: HTTPTestClient) -> [JSONValue] {
    var values: [JSONValue] = []
    // Split on the byte: in Swift "\r\n" is one Character, and chunk framing puts CRLF next to the event lines.
    for bytes in client.buffered.split(separator: 10) {
        let line = String(decoding: bytes, as: UTF8.self)
        if line.hasPrefix("data: "), let value = try? JSONValue.parse(String(line.dropFirst(6))) { values.append(value) }
    }
    return values
}
