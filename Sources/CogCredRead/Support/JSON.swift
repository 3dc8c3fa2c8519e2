import CJSON

/// A JSON document, read and written with json-c. Every JSON the read side
/// touches goes through it: the config file, token claims, and what the
/// helpers print (token --format json, the docker and kubectl answers).
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The value of a whole document; nil unless `bytes` are exactly one
    /// JSON value (RFC 8259) in valid UTF-8, white space around it allowed.
    /// json-c's strict mode still takes 'single-quoted' strings; nothing else
    /// beyond the RFC.
    public static func parse(_ bytes: [UInt8]) -> JSONValue? {
        guard bytes.count < Int(Int32.max), let tokener = json_tokener_new() else { return nil }
        defer { json_tokener_free(tokener) }
        json_tokener_set_flags(tokener, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8)
        // A NUL after the text tells the tokener the input ends there, so a
        // bare number or literal (`1`, `null`) is complete rather than awaited.
        let object = (bytes + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { json_tokener_parse_ex(tokener, $0.baseAddress, Int32($0.count)) }
        }
        defer { json_object_put(object) }
        // An incomplete document is json_tokener_continue, not success.
        guard json_tokener_get_error(tokener) == json_tokener_success else { return nil }
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        guard bytes[min(json_tokener_get_parse_end(tokener), bytes.count)...].allSatisfy(isSpace) else { return nil }
        // json-c represents a JSON null as no object at all.
        return JSONValue(object)
    }

    private init(_ object: OpaquePointer?) {
        guard let object else {
            self = .null
            return
        }
        switch json_object_get_type(object) {
        case json_type_boolean: self = .bool(json_object_get_boolean(object) != 0)
        case json_type_int: self = .int(json_object_get_int64(object))
        case json_type_double: self = .double(json_object_get_double(object))
        case json_type_string:
            let length = Int(json_object_get_string_len(object))
            let bytes = UnsafeRawPointer(json_object_get_string(object)).map {
                Array(UnsafeBufferPointer(start: $0.assumingMemoryBound(to: UInt8.self), count: length))
            } ?? []
            self = .string(String(decoding: bytes, as: UTF8.self))
        case json_type_array:
            self = .array((0..<json_object_array_length(object)).map { JSONValue(json_object_array_get_idx(object, $0)) })
        case json_type_object:
            var members: [String: JSONValue] = [:]
            var iterator = json_object_iter_begin(object)
            var end = json_object_iter_end(object)
            while json_object_iter_equal(&iterator, &end) == 0 {
                members[String(cString: json_object_iter_peek_name(&iterator))] = JSONValue(json_object_iter_peek_value(&iterator))
                json_object_iter_next(&iterator)
            }
            self = .object(members)
        default: self = .null
        }
    }

    /// One line, keys sorted, slashes not escaped: what every JSON output of
    /// cog-cred looks like, so it diffs and greps well.
    public var compactText: String { render(JSON_C_TO_STRING_PLAIN) }

    /// Indented two spaces, keys sorted: the config file.
    public var prettyText: String { render(JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED) }

    private func render(_ style: Int32) -> String {
        guard let object = makeObject() else { return "null" }
        defer { json_object_put(object) }
        return String(cString: json_object_to_json_string_ext(object, style | JSON_C_TO_STRING_NOSLASHESCAPE))
    }

    /// A new json-c object (nil for null), members added in sorted order.
    private func makeObject() -> OpaquePointer? {
        switch self {
        case .null: return nil
        case .bool(let value): return json_object_new_boolean(value ? 1 : 0)
        case .int(let value): return json_object_new_int64(value)
        case .double(let value): return json_object_new_double(value)
        case .string(let value):
            // With its length: a string may hold a NUL.
            var bytes = Array(value.utf8)
            bytes.append(0)
            return bytes.withUnsafeBufferPointer { b in
                b.withMemoryRebound(to: CChar.self) { json_object_new_string_len($0.baseAddress, Int32(clamping: $0.count - 1)) }
            }
        case .array(let values):
            let array = json_object_new_array()
            for value in values { json_object_array_add(array, value.makeObject()) }
            return array
        case .object(let members):
            let object = json_object_new_object()
            for key in members.keys.sorted() { json_object_object_add(object, key, members[key]!.makeObject()) }
            return object
        }
    }

    // MARK: - Reading values

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// A number, whole or not.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// A member that is either absent or null.
    public static func isAbsent(_ value: JSONValue?) -> Bool {
        value == nil || value == .null
    }
}
