import Testing

import LonglinkCore

@Suite("DigestMap")
struct DigestMapTests {
    /// A deterministic generator, so a failure repeats.
    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test("agrees with a Dictionary through random sets, updates and removals", arguments: [1, 2, 3])
    func agreesWithDictionary(seed: UInt64) {
        var random = SplitMix(state: seed)
        // Few distinct keys, many operations: probe runs grow, break and are shifted back.
        let keys = (0..<300).map { _ in random.next() } + [0, 1]
        var map = DigestMap<Int>()
        var model: [UInt64: Int] = [:]
        for step in 0..<20_000 {
            let key = keys[Int(random.next() % UInt64(keys.count))]
            let stored = key == 0 ? 1 : key
            if random.next() % 3 == 0 {
                map[key] = nil
                model[stored] = nil
            } else {
                map[key] = step
                model[stored] = step
            }
            if step % 997 == 0 {
                for probe in keys { #expect(map[probe] == model[probe == 0 ? 1 : probe], "key \(probe) at step \(step)") }
            }
            #expect(map.count == model.count)
        }
        for probe in keys { #expect(map[probe] == model[probe == 0 ? 1 : probe]) }
        map.removeAll()
        #expect(map.isEmpty && map[keys[0]] == nil)
    }
}
