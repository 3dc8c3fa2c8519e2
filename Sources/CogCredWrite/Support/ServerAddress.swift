// A server as a person names it to setup-git and setup-docker: a host,
// HOST:PORT, or a URL copied from a remote or a registry's page. Only the
// host and port are kept: the user name and password a URL can carry
// (https://user:secret@host/) are dropped before anything is written or
// shown, and so are the path, query and fragment.

/// A host, lower case, with its port when one was given: from HOST,
/// HOST:PORT (either may end in "/"), or a URL of one of the schemes asked for.
public struct ServerAddress: Sendable, Equatable {
    /// `host` or `host:port`, as git's and docker's configuration key it.
    public let hostAndPort: String

    /// The address in `text`, or nil: a scheme not in `schemes`, a port that
    /// is not a number, characters no host name or IPv6 literal has, or
    /// nothing at all. `defaultPort` (https's 443 for git, which drops it
    /// when it normalises a URL) is dropped too, so that `host:443` and
    /// `host` are one entry.
    public init?(_ text: String, schemes: Set<String>, defaultPort: String? = nil) {
        var rest = Substring(text)
        var authority: Substring
        if let scheme = Self.scheme(of: rest) {
            guard schemes.contains(scheme.lowercased()) else { return nil }
            rest = rest.dropFirst(scheme.count + 3)
            authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        } else {
            // Without a scheme, a host and nothing else ("host/" too): "a/b"
            // or "git@host:org/repo" (ssh's form) is not a server here.
            authority = rest.hasSuffix("/") ? rest.dropLast() : rest
            guard !authority.contains(where: { "/?#@".contains($0) }) else { return nil }
        }
        var name = Substring(authority.lowercased())
        var port: Substring? = nil
        if let colon = name.lastIndex(of: ":"), !name.hasSuffix("]") {
            port = name[name.index(after: colon)...]
            name = name[..<colon]
        }
        if let port {
            guard !port.isEmpty, port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        }
        let bracketed = name.hasPrefix("[") && name.hasSuffix("]") && name.count > 2
        guard !name.isEmpty, name.count <= 253, !name.hasPrefix("."), !name.hasPrefix("-"),
            name.allSatisfy({ Self.hostCharacter($0, bracketed: bracketed) })
        else { return nil }
        if let port, String(port) != defaultPort {
            hostAndPort = "\(name):\(port)"
        } else {
            hostAndPort = String(name)
        }
    }

    /// `text` as it may be shown in a message, quoted after ": ": as libcurl
    /// rebuilds it without a user name or password; nothing when libcurl
    /// cannot read it (where its password would end is unknown).
    public static func shown(_ text: String) -> String {
        guard case .success(let url) = LibcurlURL.parse(text) else { return "" }
        return ": '\(url.shownWithoutQuery.oneLine(limit: 100))'"
    }

    /// The scheme before "://", if the text starts with one (letters, then
    /// letters, digits, "+", "-", "."; RFC 3986).
    static func scheme(of text: Substring) -> Substring? {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return nil }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        return scheme
    }

    /// A letter, digit, dot or hyphen; in an IPv6 address in brackets, hex digits, colons and dots.
    static func hostCharacter(_ c: Character, bracketed: Bool) -> Bool {
        guard c.isASCII else { return false }
        if bracketed { return c.isHexDigit || c == ":" || c == "." || c == "[" || c == "]" }
        return c.isLetter || c.isNumber || c == "." || c == "-"
    }
}
