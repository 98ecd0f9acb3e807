import Testing

import LonglinkCore
import LonglinkTestSupport

@Suite("DigestMap", .ownThreads)
struct DigestMapTests {
    @Test("agrees with a Dictionary through random sets, updates and removals", arguments: [1, 2, 3])
    func agreesWithDictionary(seed: UInt64) {
        var random = SplitMix(seed: seed)
        // Few distinct keys, many operations: probe runs grow, break and are shifted back.
        let keys = (0..<300).map { _ in random.next() } + [0, 1]
        var map = DigestMap<Int>()
        var model: [UInt64: Int] = [:]
        for step in 0..<20_000 {
            let key = keys[random.below(keys.count)]
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
