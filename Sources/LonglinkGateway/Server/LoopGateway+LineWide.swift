import LonglinkCore
import LonglinkLoop

/// Line-wide subscriptions (`subscribe order://taxi/*`) on one loop.
///
/// Semantics, as the README documents them: a line-wide subscription is **live-only**. `subscribed` carries no
/// snapshot and `recovered = false` (also when the client sent a position: no per-line position is kept, so
/// nothing missed can be replayed); from then on every change of every order of the line is pushed, each push
/// naming its order's route, in commit order per order. The snapshot and history of one order are one
/// `GET /api/v1/orders/{line}/{id}` or one per-order subscription away.
///
/// Cost: every record of the line goes to every line-wide subscriber, through the same outbound limit and slow
/// policy as any subscriber (a console that cannot keep up is cut with `slow`, or coalesced per order). Per node
/// the broker holds one subscription per line (a Redis pattern `PREFIX:r:order://taxi/*`, or every shard channel
/// when channels are sharded), however many consoles follow it.
extension LoopGateway {
    /// After the hub and the broker took the subscription: answer once the broker confirmed it (a networked broker
    /// confirms asynchronously), so every record committed after `subscribed` reaches the subscriber.
    func subscribeLineWide(_ connection: Connection, to route: Route) {
        let bound = self.bound
        let connectionID = connection.id
        shared.broker.whenSubscribed([route]) {
            bound.execute { gateway in
                gateway.subscribeRead(
                    connectionID,
                    route: route,
                    result: .success(SubscribeRead(epoch: 0, snapshot: nil, history: nil))
                )
            }
        }
    }
}
