/// Syntax checks for profile values. Each returns nil when the value is fine,
/// or what is wrong with it.
public enum ProfileValidation {
    /// The profile in effect: the one named on the command line, then
    /// COG_CRED_PROFILE, then "default". One rule for both binaries.
    public static func selectedName(flag: String?, environment: (String) -> String?) throws(ConfigError) -> String {
        if let flag { return flag }
        guard let name = environment("COG_CRED_PROFILE"), !name.isEmpty else { return "default" }
        if let problem = profileNameProblem(name) { throw .invalidValue("COG_CRED_PROFILE", problem) }
        return name
    }

    /// Profile names become Secret Service attribute values and file keys:
    /// keep them to a safe, visible alphabet.
    public static func profileNameProblem(_ name: String) -> String? {
        if name.isEmpty || name.utf8.count > 64 { return "must be 1 to 64 characters long" }
        let ok = name.utf8.allSatisfy { isAlnum($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") }
        return ok ? nil : "may contain only letters, digits, '.', '-' and '_'"
    }

    /// `<region>_<id>`, for example `us-east-1_Abc123`.
    public static func poolIDProblem(_ id: String) -> String? {
        guard let region = regionPrefix(ofPoolID: id) else {
            return "expected <region>_<id>, for example us-east-1_Abc123"
        }
        let rest = id.utf8.dropFirst(region.utf8.count + 1)
        if rest.isEmpty || rest.count > 55 || !rest.allSatisfy(isAlnum) {
            return "expected <region>_<id>, for example us-east-1_Abc123"
        }
        return regionProblem(region)
    }

    public static func regionPrefix(ofPoolID id: String) -> String? {
        guard let underscore = id.firstIndex(of: "_") else { return nil }
        let region = String(id[..<underscore])
        return region.isEmpty ? nil : region
    }

    /// AWS region names: lowercase words and a number joined by '-', such as `eu-west-2`.
    public static func regionProblem(_ region: String) -> String? {
        let parts = region.split(separator: "-", omittingEmptySubsequences: false)
        let wordsOK = parts.dropLast().allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 97 && $0 <= 122 } }
        let numberOK = parts.last.map { !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } } ?? false
        return parts.count >= 3 && wordsOK && numberOK ? nil : "'\(region.oneLine(limit: 40))' is not an AWS region name such as us-east-1"
    }

    /// App client ids are 1 to 128 word characters.
    public static func clientIDProblem(_ id: String) -> String? {
        let ok = !id.isEmpty && id.utf8.count <= 128 && id.utf8.allSatisfy { isAlnum($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "+") }
        return ok ? nil : "expected the app client id: letters and digits, up to 128 of them"
    }

    public static func endpointProblem(_ url: String) -> String? {
        let lower = url.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
            return "must start with https:// or http://"
        }
        let host = lower.drop(while: { $0 != "/" }).dropFirst(2)
        if host.isEmpty || host.first == "/" { return "has no host" }
        if url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) { return "must not contain spaces or control characters" }
        return nil
    }

    /// An OAuth scope token (RFC 6749 3.3): printable ASCII but space, `"` and `\\`.
    public static func scopeProblem(_ scope: String) -> String? {
        let ok = !scope.isEmpty && scope.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }
        return ok ? nil : "'\(scope.oneLine(limit: 40))' is not an OAuth scope such as openid or orders/read"
    }

    /// What `--domain` takes: a full URL, or the prefix of a Cognito domain
    /// (`my-app` is `https://my-app.auth.REGION.amazoncognito.com`).
    public static func expandDomain(_ text: String, region: String) -> String {
        let lower = text.lowercased()
        if lower.hasPrefix("https://") || lower.hasPrefix("http://") {
            return text.hasSuffix("/") ? String(text.dropLast()) : text
        }
        return "https://\(text).auth.\(region).amazoncognito.com"
    }

    /// `REGION:UUID`, such as `us-east-1:0a1b2c3d-0000-4000-8000-000000000001`.
    public static func identityPoolIDProblem(_ id: String) -> String? {
        let parts = id.split(separator: ":", omittingEmptySubsequences: false)
        let uuid = parts.count == 2 ? parts[1] : ""
        let uuidOK = uuid.utf8.count == 36 && uuid.utf8.allSatisfy { isAlnum($0) || $0 == UInt8(ascii: "-") }
        guard parts.count == 2, regionProblem(String(parts[0])) == nil, uuidOK else {
            return "expected REGION:UUID, such as us-east-1:0a1b2c3d-0000-4000-8000-000000000001"
        }
        return nil
    }

    /// A loopback redirect URI with a port (RFC 8252 7.3): what browser
    /// sign-in can listen at.
    public static func redirectURIProblem(_ uri: String) -> String? {
        let lower = uri.lowercased()
        guard lower.hasPrefix("http://localhost:") || lower.hasPrefix("http://127.0.0.1:") else {
            return "must be http://localhost:PORT/PATH (or http://127.0.0.1:PORT/PATH), as registered in the app client"
        }
        let rest = lower.dropFirst(17)  // both prefixes are 17 characters
        let port = rest.prefix { $0 != "/" }
        guard let number = UInt16(port), number > 0 else { return "needs a port, such as http://localhost:8400/callback" }
        if uri.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "#") }) {
            return "must not contain spaces, control characters or a fragment"
        }
        return nil
    }

    /// A Cognito domain prefix: lowercase letters, digits and hyphens.
    public static func domainPrefixProblem(_ prefix: String) -> String? {
        let ok = !prefix.isEmpty && prefix.utf8.count <= 63
            && prefix.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 }
        // Not echoed: what is neither may be a URL with a password and no scheme.
        return ok ? nil : "it is neither an https:// URL nor a Cognito domain prefix (lowercase letters, digits, '-')"
    }

    /// A WebAuthn relying party id: a host name (`auth.example.com`), in
    /// lowercase, with no scheme, port or path; the origin a security key
    /// signs for is `https://` and it.
    public static func relyingPartyProblem(_ id: String) -> String? {
        let labels = id.split(separator: ".", omittingEmptySubsequences: false)
        let ok = !id.isEmpty && id.utf8.count <= 253
            && labels.allSatisfy { label in
                !label.isEmpty && label.utf8.count <= 63 && label.first != "-" && label.last != "-"
                    && label.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 }
            }
        return ok ? nil : "'\(id.oneLine(limit: 70))' is not a relying party id: a host name in lowercase, such as auth.example.com"
    }

    /// The host of an `https://HOST[:PORT][/...]` URL, lowercased; nil when
    /// it is no relying party id (an address, say).
    public static func host(of url: String) -> String? {
        let lower = url.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else { return nil }
        let authority = lower.drop(while: { $0 != "/" }).dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = String(authority.split(separator: "@").last?.prefix { $0 != ":" } ?? "")
        return relyingPartyProblem(host) == nil ? host : nil
    }

    static func isAlnum(_ b: UInt8) -> Bool {
        (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122)
    }
}
