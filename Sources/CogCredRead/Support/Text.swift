extension [String] {
    /// "a, b or c": a list for a person to read, from an enum's cases, so
    /// that no message or help text types the list again.
    public func spoken(_ conjunction: String = "or") -> String {
        guard let last, count > 1 else { return first ?? "" }
        return dropLast().joined(separator: ", ") + " " + conjunction + " " + last
    }
}

extension String {
    /// Collapses a message from elsewhere (a server, a C library) to one
    /// printable line of bounded length, so it can be shown in a one-line error.
    public func oneLine(limit: Int = 300) -> String {
        var out = ""
        var lastWasSpace = false
        for scalar in unicodeScalars where !Self.isHidden(scalar) {
            let isSpace = scalar.properties.isWhitespace || scalar.value < 0x20 || scalar.value == 0x7F
            if isSpace {
                if !lastWasSpace && !out.isEmpty { out.append(" ") }
                lastWasSpace = true
            } else {
                out.unicodeScalars.append(scalar)
                lastWasSpace = false
            }
            if out.count >= limit { return String(out.prefix(limit)) + "…" }
        }
        return lastWasSpace ? String(out.dropLast()) : out
    }

    /// Without the characters that could take over a terminal or disguise
    /// text: control characters (C0 but newline and tab, DEL, C1: an ESC or
    /// CSI from a server could move the cursor, retitle the window or
    /// rewrite what was printed) and Unicode's bidirectional overrides.
    /// For anything that came from the network (Cognito's messages, its
    /// CODE_DELIVERY_DESTINATION, token claims) before a person sees it.
    public var printable: String {
        var out = ""
        for scalar in unicodeScalars where !Self.isHidden(scalar) && (scalar.value >= 0x20 || scalar == "\n" || scalar == "\t") {
            out.unicodeScalars.append(scalar)
        }
        return out
    }

    /// DEL, the C1 controls and the bidirectional formatting characters
    /// (U+061C, U+200E-F, U+202A-E, U+2066-9): never shown, always dropped.
    static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// Without leading and trailing white space (Unicode's definition).
    public func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[first...last])
    }

    /// Where `needle` first occurs, compared byte for byte (UTF-8). Not
    /// `firstRange(of:)` or `contains(_:)` with a string: those come from
    /// _StringProcessing, which the front's Embedded Swift build does not
    /// have (and which, in an ordinary static build, linked 880 KB of code
    /// among what every read runs: docs/performance.md, "Only what a read
    /// runs in that order").
    public func firstByteRange(of needle: String) -> Range<String.Index>? {
        let bytes = utf8
        var start = bytes.startIndex
        while !bytes[start...].starts(with: needle.utf8) {
            guard start != bytes.endIndex else { return nil }
            bytes.formIndex(after: &start)
        }
        return start..<bytes.index(start, offsetBy: needle.utf8.count)
    }

    /// Whether `needle` occurs, byte for byte (see `firstByteRange`).
    public func containsBytes(_ needle: String) -> Bool {
        firstByteRange(of: needle) != nil
    }
}
