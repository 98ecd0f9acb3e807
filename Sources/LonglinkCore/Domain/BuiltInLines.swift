/// The built-in business lines' lifecycles, as data (`StateMachineCatalog.builtIn` is built from them).
///
/// - **taxi**: `created → dispatching → driver_assigned → driver_arriving → driver_arrived → in_trip →
///   completed → paid`. `cancelled` (with a reason) from every state before the trip starts; `no_driver_timeout`
///   from `dispatching`; a driver dropping out sends `driver_assigned`/`driver_arriving` back to `dispatching`.
/// - **express**: taxi without the arrival steps: `created → dispatching → driver_assigned → in_trip →
///   completed → paid`.
/// - **premium**: taxi plus scheduled orders: `created → reserved → dispatching` at the scheduled time.
/// - **carpool**: taxi plus matching with other riders: `dispatching → matching → pool_matched →
///   driver_assigned`, or `matching → driver_assigned` when no co-rider is found in time.
public enum BuiltInLines {
    /// `created`
    public static let created: OrderState = "created"
    /// `reserved` (premium: scheduled for later)
    public static let reserved: OrderState = "reserved"
    /// `dispatching`
    public static let dispatching: OrderState = "dispatching"
    /// `matching` (carpool: looking for co-riders)
    public static let matching: OrderState = "matching"
    /// `pool_matched` (carpool: co-riders found)
    public static let poolMatched: OrderState = "pool_matched"
    /// `driver_assigned` (requires `driver_id`)
    public static let driverAssigned: OrderState = "driver_assigned"
    /// `driver_arriving`
    public static let driverArriving: OrderState = "driver_arriving"
    /// `driver_arrived`
    public static let driverArrived: OrderState = "driver_arrived"
    /// `in_trip`
    public static let inTrip: OrderState = "in_trip"
    /// `completed`
    public static let completed: OrderState = "completed"
    /// `paid` (terminal)
    public static let paid: OrderState = "paid"
    /// `cancelled` (terminal, requires `cancellation_reason`)
    public static let cancelled: OrderState = "cancelled"
    /// `no_driver_timeout` (terminal)
    public static let noDriverTimeout: OrderState = "no_driver_timeout"

    /// Every built-in definition.
    public static var definitions: [StateMachineDefinition] { [taxi, express, premium, carpool] }

    /// The taxi line.
    public static let taxi = StateMachineDefinition(
        line: "taxi",
        initial: "created",
        states: [
            StateDefinition("created", next: ["dispatching", "cancelled"]),
            StateDefinition("dispatching", next: ["driver_assigned", "no_driver_timeout", "cancelled"]),
            StateDefinition(
                "driver_assigned",
                next: ["driver_arriving", "dispatching", "cancelled"],
                requires: [.driverID]
            ),
            StateDefinition("driver_arriving", next: ["driver_arrived", "dispatching", "cancelled"]),
            StateDefinition("driver_arrived", next: ["in_trip", "cancelled"]),
            StateDefinition("in_trip", next: ["completed"]),
            StateDefinition("completed", next: ["paid"]),
        ] + endings
    )

    /// The express line.
    public static let express = StateMachineDefinition(
        line: "express",
        initial: "created",
        states: [
            StateDefinition("created", next: ["dispatching", "cancelled"]),
            StateDefinition("dispatching", next: ["driver_assigned", "no_driver_timeout", "cancelled"]),
            StateDefinition("driver_assigned", next: ["in_trip", "dispatching", "cancelled"], requires: [.driverID]),
            StateDefinition("in_trip", next: ["completed"]),
            StateDefinition("completed", next: ["paid"]),
        ] + endings
    )

    /// The premium line.
    public static let premium = StateMachineDefinition(
        line: "premium",
        initial: "created",
        states: [
            StateDefinition("created", next: ["reserved", "dispatching", "cancelled"]),
            StateDefinition("reserved", next: ["dispatching", "cancelled"]),
            StateDefinition("dispatching", next: ["driver_assigned", "no_driver_timeout", "cancelled"]),
            StateDefinition(
                "driver_assigned",
                next: ["driver_arriving", "dispatching", "cancelled"],
                requires: [.driverID]
            ),
            StateDefinition("driver_arriving", next: ["driver_arrived", "dispatching", "cancelled"]),
            StateDefinition("driver_arrived", next: ["in_trip", "cancelled"]),
            StateDefinition("in_trip", next: ["completed"]),
            StateDefinition("completed", next: ["paid"]),
        ] + endings
    )

    /// The carpool line.
    public static let carpool = StateMachineDefinition(
        line: "carpool",
        initial: "created",
        states: [
            StateDefinition("created", next: ["dispatching", "cancelled"]),
            StateDefinition("dispatching", next: ["matching", "no_driver_timeout", "cancelled"]),
            StateDefinition("matching", next: ["pool_matched", "driver_assigned", "no_driver_timeout", "cancelled"]),
            StateDefinition("pool_matched", next: ["driver_assigned", "matching", "cancelled"]),
            StateDefinition(
                "driver_assigned",
                next: ["driver_arriving", "dispatching", "cancelled"],
                requires: [.driverID]
            ),
            StateDefinition("driver_arriving", next: ["driver_arrived", "dispatching", "cancelled"]),
            StateDefinition("driver_arrived", next: ["in_trip", "cancelled"]),
            StateDefinition("in_trip", next: ["completed"]),
            StateDefinition("completed", next: ["paid"]),
        ] + endings
    )

    private static let endings = [
        StateDefinition("paid", terminal: true),
        StateDefinition("cancelled", terminal: true, requires: [.cancellationReason]),
        StateDefinition("no_driver_timeout", terminal: true),
    ]
}
