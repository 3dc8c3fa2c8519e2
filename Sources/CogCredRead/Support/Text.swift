extension String {
    /// Collapses a message from elsewhere (a server, a C library) to one
    /// printable line of bounded length, so it can be shown in a one-line error.
    public func oneLine(limit: Int = 300) -> String {
        var out = ""
        var lastWasSpace = false
        for scalar in unicodeScalars {
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

    /// Without leading and trailing white space (Unicode's definition).
    public func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[first...last])
    }
}
