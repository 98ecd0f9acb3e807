import Glibc
import LonglinkCore
internal import CLonglinkProto

/// Presence frames (`PresenceReply`, `PresenceEvent`) ↔ protobuf-c. Not on the hot path: the member strings are
/// copied into C strings that live for the encoding call.
extension ProtobufFrameCodec {
    /// C copies of Swift strings, freed together.
    private final class CStrings {
        private var pointers: [UnsafeMutablePointer<CChar>] = []
        func copy(_ text: String) -> UnsafeMutablePointer<CChar> {
            let pointer = strdup(text)!
            pointers.append(pointer)
            return pointer
        }
        deinit { pointers.forEach { free($0) } }
    }

    private static func withCMembers(
        _ members: [PresenceMember],
        _ body: (UnsafeMutablePointer<UnsafeMutablePointer<Longlink__V1__PresenceMember>?>?) -> FrameError?
    ) -> FrameError? {
        for member in members where (member.userID + member.clientName + member.connectionID + member.nodeID).utf8.contains(0) {
            return .unencodable("a presence member contains a NUL byte")
        }
        let strings = CStrings()
        let structs = UnsafeMutablePointer<Longlink__V1__PresenceMember>.allocate(capacity: max(1, members.count))
        let pointers = UnsafeMutablePointer<UnsafeMutablePointer<Longlink__V1__PresenceMember>?>.allocate(capacity: max(1, members.count))
        defer {
            structs.deallocate()
            pointers.deallocate()
        }
        for (index, member) in members.enumerated() {
            var message = Longlink__V1__PresenceMember()
            longlink__v1__presence_member__init(&message)
            message.user_id = strings.copy(member.userID)
            message.client_name = strings.copy(member.clientName)
            message.connection_id = strings.copy(member.connectionID)
            message.since_ms = member.sinceMillis
            message.node_id = strings.copy(member.nodeID)
            (structs + index).initialize(to: message)
            pointers[index] = structs + index
        }
        return withExtendedLifetime(strings) { body(members.isEmpty ? nil : pointers) }
    }

    static func withCPresenceReply(_ reply: PresenceReply, _ body: (UnsafePointer<CServerFrame>) -> FrameError?) -> FrameError? {
        var message = Longlink__V1__PresenceReply()
        longlink__v1__presence_reply__init(&message)
        message.request_id = reply.requestID
        message.count = reply.count
        message.users = reply.users
        message.counts_only = reply.countsOnly ? 1 : 0
        return withCString(reply.route.text) { route in
            message.route = route
            return withCMembers(reply.members) { members in
                message.n_members = reply.members.count
                message.members = members
                return wrap(&message, LONGLINK__V1__SERVER_FRAME__KIND_PRESENCE_REPLY, { $0.presence_reply = $1 }, body)
            }
        }
    }

    static func withCPresenceEvent(_ event: PresenceEvent, _ body: (UnsafePointer<CServerFrame>) -> FrameError?) -> FrameError? {
        var message = Longlink__V1__PresenceEvent()
        longlink__v1__presence_event__init(&message)
        message.joined = event.joined ? 1 : 0
        return withCString(event.route.text) { route in
            message.route = route
            return withCMembers([event.member]) { members in
                message.member = members![0]
                return wrap(&message, LONGLINK__V1__SERVER_FRAME__KIND_PRESENCE_EVENT, { $0.presence_event = $1 }, body)
            }
        }
    }

    static func presenceMember(_ member: Longlink__V1__PresenceMember) throws(FrameError) -> PresenceMember {
        PresenceMember(
            userID: try string(member.user_id, "presence_member.user_id"),
            clientName: try string(member.client_name, "presence_member.client_name"),
            connectionID: try string(member.connection_id, "presence_member.connection_id"),
            sinceMillis: member.since_ms,
            nodeID: try string(member.node_id, "presence_member.node_id")
        )
    }

    static func presenceReply(_ reply: Longlink__V1__PresenceReply) throws(FrameError) -> PresenceReply {
        var members: [PresenceMember] = []
        members.reserveCapacity(reply.n_members)
        for index in 0..<reply.n_members {
            guard let member = reply.members[index] else { throw .invalidValue("presence_reply.members: null entry") }
            members.append(try presenceMember(member.pointee))
        }
        return PresenceReply(
            requestID: reply.request_id,
            route: try route(reply.route, "presence_reply.route"),
            count: reply.count,
            users: reply.users,
            countsOnly: reply.counts_only != 0,
            members: members
        )
    }

    static func presenceEvent(_ event: Longlink__V1__PresenceEvent) throws(FrameError) -> PresenceEvent {
        guard let member = event.member else { throw .invalidValue("presence_event.member is missing") }
        return PresenceEvent(
            route: try route(event.route, "presence_event.route"),
            joined: event.joined != 0,
            member: try presenceMember(member.pointee)
        )
    }
}
