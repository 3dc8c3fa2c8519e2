/// A response's headers as libcurl hands them over, kept as the bytes
/// they came in ("Name\0value\0" each): those passed on reach the server
/// as C strings, and no String is made for them. It runs for every header
/// of every response, where Strings cost an allocation or two each (a
/// short one is copied again to become a C string).
struct ResponseHeaders {
    private var bytes: [UInt8] = []
    /// Where each header's name and value start in `bytes`.
    private var offsets: [(name: Int, value: Int)] = []
    /// A Connection header came that may name others to leave behind.
    private var connection = false

    init() {}

    /// Headers given as Strings (the tests).
    init(_ headers: [(String, String)]) {
        for (name, value) in headers {
            var name = name, value = value
            name.withUTF8 { name in value.withUTF8 { append(name: UnsafeRawBufferPointer(name), value: UnsafeRawBufferPointer($0)) } }
        }
    }

    mutating func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        if offsets.isEmpty {
            bytes.reserveCapacity(512)
            offsets.reserveCapacity(16)
        }
        let start = bytes.count
        bytes.append(contentsOf: name.assumingMemoryBound(to: UInt8.self))
        bytes.append(0)
        offsets.append((start, bytes.count))
        bytes.append(contentsOf: value.assumingMemoryBound(to: UInt8.self))
        bytes.append(0)
        // What nearly every response says, and names no other header.
        if RequestHeaders.named(name, "connection") && !RequestHeaders.named(value, "keep-alive") && !RequestHeaders.named(value, "close") {
            connection = true
        }
    }

    /// Each header as (name, lowercased name, value).
    var all: [RequestHeaders.Header] { headers(offsets) }

    private func headers(_ offsets: some Sequence<(name: Int, value: Int)>) -> [RequestHeaders.Header] {
        offsets.map { offset in
            let name = string(at: offset.name)
            return (name, name.lowercased(), string(at: offset.value))
        }
    }

    /// Those to pass on (RequestHeaders' rules: no hop-by-hop ones, none a
    /// Connection header names, no length), each as its name and value.
    func forwarded(_ each: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Void) {
        bytes.withUnsafeBytes { bytes in
            func name(_ offset: (name: Int, value: Int)) -> UnsafeRawBufferPointer {
                UnsafeRawBufferPointer(rebasing: bytes[offset.name..<(offset.value - 1)])
            }
            let named = connection ? RequestHeaders.connectionNamed(headers(offsets.filter { RequestHeaders.named(name($0), "connection") })) : []
            let base = bytes.baseAddress!.assumingMemoryBound(to: CChar.self)
            for offset in offsets {
                let name = name(offset)
                guard !RequestHeaders.isHopByHop(name), !RequestHeaders.named(name, "content-length") else { continue }
                if !named.isEmpty && named.contains(String(decoding: name, as: UTF8.self).lowercased()) { continue }
                each(base + offset.name, base + offset.value)
            }
        }
    }

    private func string(at offset: Int) -> String {
        String(decoding: bytes[offset...].prefix { $0 != 0 }, as: UTF8.self)
    }
}
