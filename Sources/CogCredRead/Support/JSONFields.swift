/// Why a JSON document does not have the shape expected of it, worded as a
/// path: "missing profiles.work.client-id", "wrong type at profiles.work.git-urls".
public struct JSONShapeError: Error, Equatable {
    public let text: String

    public init(_ text: String) {
        self.text = text
    }
}

/// Typed access to the members of one JSON object. A member that is absent
/// or null is nil; one of another type is an error naming its path.
public struct JSONFields {
    let members: [String: JSONValue]
    let path: [String]

    public init(_ value: JSONValue, path: [String]) throws(JSONShapeError) {
        guard case .object(let members) = value else { throw JSONShapeError("wrong type at \(Self.text(path))") }
        self.members = members
        self.path = path
    }

    public func string(_ key: String) throws(JSONShapeError) -> String {
        guard let value = try optionalString(key) else { throw missing(key) }
        return value
    }

    public func object(_ key: String) throws(JSONShapeError) -> [String: JSONValue] {
        guard let value = present(key) else { throw missing(key) }
        guard let members = value.objectValue else { throw wrongType(key) }
        return members
    }

    public func optionalString(_ key: String) throws(JSONShapeError) -> String? {
        try typed(key) { $0.stringValue }
    }

    public func optionalDouble(_ key: String) throws(JSONShapeError) -> Double? {
        try typed(key) { $0.doubleValue }
    }

    public func optionalBool(_ key: String) throws(JSONShapeError) -> Bool? {
        try typed(key) { $0.boolValue }
    }

    public func optionalStrings(_ key: String) throws(JSONShapeError) -> [String]? {
        try typed(key) { value in
            guard let items = value.arrayValue else { return nil }
            let strings = items.compactMap { $0.stringValue }
            return strings.count == items.count ? strings : nil
        }
    }

    private func present(_ key: String) -> JSONValue? {
        JSONValue.isAbsent(members[key]) ? nil : members[key]
    }

    private func typed<T>(_ key: String, _ convert: (JSONValue) -> T?) throws(JSONShapeError) -> T? {
        guard let value = present(key) else { return nil }
        guard let converted = convert(value) else { throw wrongType(key) }
        return converted
    }

    private func missing(_ key: String) -> JSONShapeError { JSONShapeError("missing \(Self.text(path + [key]))") }
    private func wrongType(_ key: String) -> JSONShapeError { JSONShapeError("wrong type at \(Self.text(path + [key]))") }
    private static func text(_ path: [String]) -> String { path.joined(separator: ".") }
}
