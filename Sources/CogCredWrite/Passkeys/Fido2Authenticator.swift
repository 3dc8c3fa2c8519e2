import CFido2
import CogCredRead

/// A security key through libfido2 (loaded when first needed; CFido2.h says
/// why): a USB or NFC key libfido2 finds, the one at `path`
/// (`/dev/hidrawN`), or a virtual one at `unix:/path/to/socket`.
///
/// The PIN rule is the browsers': asked when verification is required, or
/// preferred and the key has a PIN (a key with a PIN wants it to make a
/// credential too); a key with a built-in verifier (a fingerprint) uses
/// that instead when it has no PIN. A wrong PIN is never tried again here:
/// every try costs the person one of the key's retries.
public struct Fido2Authenticator: Authenticator {
    /// The device to use; nil: the first found (with several, the one touched).
    public var path: String?

    public init(path: String?) {
        self.path = path
    }

    /// At most this many keys are looked at.
    static let maxDevices = 16

    public func assertion(_ request: AssertionRequest, prompts: any PasskeyPrompts) throws -> Assertion {
        try withDevice(timeoutMilliseconds: request.timeoutMilliseconds, prompts: prompts) { opened in
            let device = opened.handle
            guard let assert = cfido2_assert_new() else { throw PasskeyError.authenticatorFailed("out of memory") }
            var owned: OpaquePointer? = assert
            defer { cfido2_assert_free(&owned) }
            try check(cfido2_assert_set_rp(assert, request.relyingParty))
            try check(request.clientData.withUnsafeBufferPointer { cfido2_assert_set_clientdata(assert, $0.baseAddress, $0.count) })
            let allowed = try held(request.allowCredentials, of: request.relyingParty, clientData: request.clientData, device: opened)
            if allowed?.isEmpty == true { throw PasskeyError.noCredential }
            for id in allowed ?? request.allowCredentials {
                try check(id.withUnsafeBufferPointer { cfido2_assert_allow_cred(assert, $0.baseAddress, $0.count) })
            }
            let pin = try verification(request.userVerification, device: device, registering: false, prompts: prompts)
            if pin == nil, request.userVerification != .discouraged, cfido2_dev_has_uv(device) {
                try check(cfido2_assert_set_uv(assert, FIDO_OPT_TRUE))
            }
            try checkPIN(pin, of: request.relyingParty, clientData: request.clientData, device: device, timeoutMilliseconds: request.timeoutMilliseconds)
            prompts.touchSecurityKey(choosing: false)
            try perform(device: device, timeoutMilliseconds: request.timeoutMilliseconds) { cfido2_dev_get_assert(device, assert, pin) }
            return try chosenAssertion(assert, username: request.username)
        }
    }

    public func makeCredential(_ request: CredentialRequest, prompts: any PasskeyPrompts) throws -> NewCredential {
        try withDevice(timeoutMilliseconds: request.timeoutMilliseconds, prompts: prompts) { opened in
            let device = opened.handle
            guard let cred = cfido2_cred_new() else { throw PasskeyError.authenticatorFailed("out of memory") }
            var owned: OpaquePointer? = cred
            defer { cfido2_cred_free(&owned) }
            try check(cfido2_cred_set_type(cred, Int32(COSE_ES256)))
            try check(request.clientData.withUnsafeBufferPointer { cfido2_cred_set_clientdata(cred, $0.baseAddress, $0.count) })
            try check(cfido2_cred_set_rp(cred, request.relyingParty, request.relyingPartyName))
            try check(
                request.userID.withUnsafeBufferPointer {
                    cfido2_cred_set_user(cred, $0.baseAddress, $0.count, request.userName, request.userDisplayName)
                })
            try check(cfido2_cred_set_rk(cred, FIDO_OPT_TRUE))
            let excluded = try held(request.excludeCredentials, of: request.relyingParty, clientData: request.clientData, device: opened)
            if excluded?.isEmpty == false { throw PasskeyError.alreadyRegistered }
            for id in excluded ?? request.excludeCredentials {
                try check(id.withUnsafeBufferPointer { cfido2_cred_exclude(cred, $0.baseAddress, $0.count) })
            }
            let pin = try verification(request.userVerification, device: device, registering: true, prompts: prompts)
            if pin == nil, request.userVerification != .discouraged, cfido2_dev_has_uv(device) {
                try check(cfido2_cred_set_uv(cred, FIDO_OPT_TRUE))
            }
            try checkPIN(pin, of: request.relyingParty, clientData: request.clientData, device: device, timeoutMilliseconds: request.timeoutMilliseconds)
            prompts.touchSecurityKey(choosing: false)
            try perform(device: device, timeoutMilliseconds: request.timeoutMilliseconds) { cfido2_dev_make_cred(device, cred, pin) }
            let statement = bytes(cfido2_cred_attstmt_ptr(cred), cfido2_cred_attstmt_len(cred))
            guard let format = cfido2_cred_fmt(cred).map({ String(cString: $0) }), CBOR.isMap(statement) else {
                throw PasskeyError.authenticatorFailed("the key's attestation cannot be read")
            }
            return NewCredential(
                id: bytes(cfido2_cred_id_ptr(cred), cfido2_cred_id_len(cred)),
                authenticatorData: bytes(cfido2_cred_authdata_raw_ptr(cred), cfido2_cred_authdata_raw_len(cred)),
                format: format, attestationStatement: statement, transports: [opened.transport])
        }
    }

    // MARK: - The device

    /// An open key, and the path it was opened at.
    struct Device {
        let handle: OpaquePointer
        let path: String

        /// How the key is reached, as WebAuthn names transports.
        var transport: String { path.hasPrefix("nfc:") ? "nfc" : "usb" }
    }

    /// Opens the key (loading libfido2 first), runs `body`, closes it.
    func withDevice<T>(timeoutMilliseconds: Int, prompts: any PasskeyPrompts, _ body: (Device) throws -> T) throws -> T {
        guard cfido2_load() == 1 else { throw PasskeyError.libraryMissing(String(cString: cfido2_load_failure())) }
        let device = try open(timeoutMilliseconds: timeoutMilliseconds, prompts: prompts)
        defer { close(device.handle) }
        return try body(device)
    }

    func open(timeoutMilliseconds: Int, prompts: any PasskeyPrompts) throws -> Device {
        if let path { return Device(handle: try open(path: path, timeoutMilliseconds: timeoutMilliseconds), path: path) }
        var tried: [String] = []
        var found: [Device] = []
        for path in devicePaths() {
            do {
                found.append(Device(handle: try open(path: path, timeoutMilliseconds: timeoutMilliseconds), path: path))
            } catch let PasskeyError.noAuthenticator(why) {
                tried.append(why)
            }
        }
        switch found.count {
        case 0:
            throw PasskeyError.noAuthenticator(tried: tried.isEmpty ? "the security keys libfido2 finds: none" : tried.joined(separator: "; "))
        case 1: return found[0]
        default: return try touched(found, timeoutMilliseconds: timeoutMilliseconds, prompts: prompts)
        }
    }

    /// Opens a FIDO2 key; what was wrong when it cannot (no such device, no
    /// permission, a key that speaks U2F only). libfido2's timeout is set
    /// first: opening is itself an exchange with the key (CTAPHID INIT,
    /// GetInfo), and a stuck key, or a virtual one that never answers,
    /// would otherwise hold the command past any deadline.
    func open(path: String, timeoutMilliseconds: Int) throws(PasskeyError) -> OpaquePointer {
        guard let device = cfido2_dev_new() else { throw .authenticatorFailed("out of memory") }
        _ = cfido2_dev_set_timeout(device, Int32(clamping: timeoutMilliseconds))
        let opened = cfido2_dev_open(device, path)
        if opened == FIDO_OK, cfido2_dev_is_fido2(device) { return device }
        close(device)
        let why: String
        if opened == FIDO_OK {
            why = "a U2F-only key, which holds no passkeys"
        } else if opened == FIDO_ERR_RX {
            why = "it did not answer within \(timeoutMilliseconds / 1000) s"
        } else if path.hasPrefix(CFIDO2_UNIX_PREFIX) {
            // libfido2 says only "internal error" when the I/O hook's open fails.
            why = "cannot connect: no virtual key serves that socket, or another user's does"
        } else {
            why = "cannot open it: \(String(cString: cfido2_strerr(opened)))"
        }
        throw .noAuthenticator(tried: "\(path) (\(why))")
    }

    func close(_ device: OpaquePointer) {
        var owned: OpaquePointer? = device
        _ = cfido2_dev_close(device)
        cfido2_dev_free(&owned)
    }

    func devicePaths() -> [String] {
        guard let list = cfido2_dev_info_new(Self.maxDevices) else { return [] }
        var owned: OpaquePointer? = list
        defer { cfido2_dev_info_free(&owned, Self.maxDevices) }
        var found = 0
        guard cfido2_dev_info_manifest(list, Self.maxDevices, &found) == FIDO_OK else { return [] }
        return (0..<found).compactMap { cfido2_dev_info_path(list, $0).map { String(cString: $0) } }
    }

    /// Several keys: each blinks for a touch, and the one touched is used
    /// (libfido2's touch requests ask no key for a credential); the others
    /// are closed.
    func touched(_ devices: [Device], timeoutMilliseconds: Int, prompts: any PasskeyPrompts) throws -> Device {
        let waiting = devices.filter { cfido2_dev_get_touch_begin($0.handle) == FIDO_OK }
        var chosen: Device? = nil
        if !waiting.isEmpty {
            prompts.touchSecurityKey(choosing: true)
            let deadline = Deadline(secondsFromNow: Double(timeoutMilliseconds) / 1000)
            while chosen == nil && deadline.remaining > 0 {
                for device in waiting where chosen == nil {
                    var touched: Int32 = 0
                    if cfido2_dev_get_touch_status(device.handle, &touched, 50) == FIDO_OK, touched != 0 { chosen = device }
                }
            }
        }
        for device in devices where device.handle != chosen?.handle {
            _ = cfido2_dev_cancel(device.handle)
            close(device.handle)
        }
        guard let chosen else {
            if waiting.isEmpty { throw PasskeyError.noAuthenticator(tried: devices.map(\.path).joined(separator: ", ") + " (none answered)") }
            throw PasskeyError.timedOut(seconds: timeoutMilliseconds / 1000)
        }
        // As OpenSSH's sk-usbhid does: the key touched serves the request.
        return chosen
    }

    // MARK: - Lists longer than the key takes

    /// Which of `ids` the key holds for `relyingParty`; nil when the whole
    /// list fits in one request. A key takes only so many credentials in a
    /// list (GetInfo's maxCredentialCountInList; a CTAP 2.0 key says
    /// nothing, so one), and Cognito lists every passkey of the user's,
    /// those on other keys too: as browsers and python-fido2 do, the key is
    /// asked a batch at a time without a touch (GetAssertion with up=false,
    /// which signs nothing the relying party would take).
    func held(_ ids: [[UInt8]], of relyingParty: String, clientData: [UInt8], device opened: Device) throws -> [[UInt8]]? {
        let device = opened.handle
        let limit = max(1, Int(clamping: cfido2_dev_max_credentials_in_list(device)))
        guard ids.count > limit else { return nil }
        var held: [[UInt8]] = []
        for start in stride(from: 0, to: ids.count, by: limit) {
            held += try silentAssertion(relyingParty, clientData: clientData) { probe in
                for id in ids[start..<min(start + limit, ids.count)] {
                    try check(id.withUnsafeBufferPointer { cfido2_assert_allow_cred(probe, $0.baseAddress, $0.count) })
                }
                let code = cfido2_dev_get_assert(device, probe, nil)
                if code == FIDO_ERR_NO_CREDENTIALS { return [] }
                // No touch or PIN is asked for: any failure but "none here" is the key's.
                try check(code)
                return (0..<cfido2_assert_count(probe)).map { bytes(cfido2_assert_id_ptr(probe, $0), cfido2_assert_id_len(probe, $0)) }
            }
        }
        return held
    }

    // MARK: - PIN and verification

    /// The PIN to send, if the browsers' rule asks for one.
    func verification(_ wanted: WebAuthn.UserVerification, device: OpaquePointer, registering: Bool, prompts: any PasskeyPrompts) throws
        -> String?
    {
        let hasPIN = cfido2_dev_has_pin(device)
        let builtIn = cfido2_dev_has_uv(device)
        let asks: Bool
        switch wanted {
        case .required:
            guard hasPIN || builtIn else { throw PasskeyError.cannotVerifyUser }
            asks = hasPIN && !builtIn
        case .preferred: asks = hasPIN && !builtIn
        case .discouraged: asks = false
        }
        // A key with a PIN wants it to make a credential, whatever the options.
        guard asks || (registering && hasPIN && !builtIn) else { return nil }
        var retries: Int32 = -1
        let counted = cfido2_dev_get_retry_count(device, &retries) == FIDO_OK
        if counted && retries == 0 { throw PasskeyError.pinBlocked }
        return try prompts.securityKeyPIN(retriesLeft: counted ? Int(retries) : nil)
    }

    /// The PIN checked before the person is told to touch the key, so that
    /// "Touch your security key" is said only once the PIN was accepted.
    /// libfido2 (1.12) has no call that only checks a PIN (its PIN token
    /// is got inside each request); a GetAssertion with user presence off
    /// and the PIN gets one (the key checks the PIN) and asks for no touch.
    /// It signs nothing the relying party would take: its client data is
    /// the request's own, without presence. No credential here is no matter
    /// (the PIN was accepted); a key that refuses a silent assertion checks
    /// the PIN with the request itself, as before.
    func checkPIN(_ pin: String?, of relyingParty: String, clientData: [UInt8], device: OpaquePointer, timeoutMilliseconds: Int) throws {
        guard let pin else { return }
        let code = try silentAssertion(relyingParty, clientData: clientData) { cfido2_dev_get_assert(device, $0, pin) }
        switch code {
        case FIDO_ERR_PIN_INVALID, FIDO_ERR_PIN_BLOCKED, FIDO_ERR_PIN_AUTH_BLOCKED:
            try perform(device: device, timeoutMilliseconds: timeoutMilliseconds) { code }
        default: return
        }
    }

    /// A GetAssertion of `relyingParty` that asks for no touch (user
    /// presence off), made ready and given to `body`: it signs nothing the
    /// relying party would take.
    func silentAssertion<T>(_ relyingParty: String, clientData: [UInt8], _ body: (OpaquePointer) throws -> T) throws -> T {
        guard let probe = cfido2_assert_new() else { throw PasskeyError.authenticatorFailed("out of memory") }
        var owned: OpaquePointer? = probe
        defer { cfido2_assert_free(&owned) }
        try check(cfido2_assert_set_rp(probe, relyingParty))
        try check(clientData.withUnsafeBufferPointer { cfido2_assert_set_clientdata(probe, $0.baseAddress, $0.count) })
        try check(cfido2_assert_set_up(probe, FIDO_OPT_FALSE))
        return try body(probe)
    }

    // MARK: - Results

    /// Runs a request that waits for the person, and words its failure.
    func perform(device: OpaquePointer, timeoutMilliseconds: Int, _ call: () -> Int32) throws {
        let deadline = Deadline(secondsFromNow: Double(timeoutMilliseconds) / 1000)
        let code = call()
        guard code != FIDO_OK else { return }
        switch code {
        case FIDO_ERR_PIN_INVALID:
            var retries: Int32 = -1
            let counted = cfido2_dev_get_retry_count(device, &retries) == FIDO_OK
            throw PasskeyError.wrongPIN(retriesLeft: counted ? Int(retries) : nil)
        case FIDO_ERR_PIN_BLOCKED: throw PasskeyError.pinBlocked
        case FIDO_ERR_PIN_AUTH_BLOCKED: throw PasskeyError.pinAuthBlocked
        case FIDO_ERR_NO_CREDENTIALS: throw PasskeyError.noCredential
        case FIDO_ERR_CREDENTIAL_EXCLUDED: throw PasskeyError.alreadyRegistered
        case FIDO_ERR_OPERATION_DENIED, FIDO_ERR_KEEPALIVE_CANCEL: throw PasskeyError.declined
        case FIDO_ERR_UNSUPPORTED_OPTION, FIDO_ERR_PIN_REQUIRED, FIDO_ERR_PIN_NOT_SET:
            throw PasskeyError.cannotVerifyUser
        case FIDO_ERR_UV_BLOCKED, FIDO_ERR_UV_INVALID: throw PasskeyError.builtInVerificationFailed
        case FIDO_ERR_ACTION_TIMEOUT, FIDO_ERR_USER_ACTION_TIMEOUT, FIDO_ERR_TIMEOUT:
            throw PasskeyError.timedOut(seconds: timeoutMilliseconds / 1000)
        case FIDO_ERR_RX where deadline.remaining == 0:
            // libfido2's own deadline (fido_dev_set_timeout) ends a read as a failed one.
            throw PasskeyError.timedOut(seconds: timeoutMilliseconds / 1000)
        default:
            throw PasskeyError.authenticatorFailed("libfido2: \(String(cString: cfido2_strerr(code)))")
        }
    }

    func check(_ code: Int32) throws {
        guard code == FIDO_OK else { throw PasskeyError.authenticatorFailed("libfido2: \(String(cString: cfido2_strerr(code)))") }
    }

    /// The assertion to send: the user's own when the key holds several
    /// passkeys for the relying party (no allowed list), else the first.
    func chosenAssertion(_ assert: OpaquePointer, username: String) throws -> Assertion {
        let count = cfido2_assert_count(assert)
        guard count > 0 else { throw PasskeyError.noCredential }
        let index = (0..<count).first { cfido2_assert_user_name(assert, $0).map { String(cString: $0) } == username } ?? 0
        guard let data = CBOR.byteString(bytes(cfido2_assert_authdata_ptr(assert, index), cfido2_assert_authdata_len(assert, index))) else {
            throw PasskeyError.authenticatorFailed("the key's authenticator data is not a CBOR byte string")
        }
        let user = bytes(cfido2_assert_user_id_ptr(assert, index), cfido2_assert_user_id_len(assert, index))
        return Assertion(
            credentialID: bytes(cfido2_assert_id_ptr(assert, index), cfido2_assert_id_len(assert, index)), authenticatorData: data,
            signature: bytes(cfido2_assert_sig_ptr(assert, index), cfido2_assert_sig_len(assert, index)),
            userHandle: user.isEmpty ? nil : user)
    }

    func bytes(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: pointer, count: count))
    }
}
