/// A mistyped name's nearest real one, for "did you mean 'work'?": one
/// rule for command, option and profile names, in both binaries (the
/// front's wording of a missing profile is cog-cred-cli's too).
public enum NearMiss {
    /// The name nearest to `word` (at most two edits away, fewer than the
    /// word is long; or one it starts, from three letters), if any.
    public static func closest(to word: String, in names: [String]) -> String? {
        let typed = Array(word.utf8)
        var best: (name: String, distance: Int)? = nil
        let others = names.filter { $0 != word }
        for name in others {
            let distance = editDistance(typed, Array(name.utf8))
            if distance < (best?.distance ?? Int.max) { best = (name, distance) }
        }
        if let best, best.distance <= 2, best.distance < typed.count { return best.name }
        return others.first { $0.hasPrefix(word) && typed.count >= 3 }
    }

    /// Levenshtein distance, by bytes: every name cog-cred knows is ASCII.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
