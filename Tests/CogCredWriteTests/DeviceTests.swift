import Foundation
import Synchronization
import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

/// A remembered device as pycognito makes and proves one, from Fixtures/make-device-vectors.py.
struct DeviceVector: Decodable, CustomTestStringConvertible {
    var device_key, group_key, password, salt_hex, password_verifier, salt, private_a, srp_b, secret_block, timestamp, signature: String
    var testDescription: String { device_key }
}

let deviceVectors: [DeviceVector] = {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/device-vectors.json")
    return try! JSONDecoder().decode([DeviceVector].self, from: Data(contentsOf: path))
}()

@Suite struct DeviceSRPTests {
    @Test func thereAreVectorsOfBothSaltShapes() {
        #expect(deviceVectors.count >= 20)
        // A salt whose top bit is set is hashed with a 00 byte in front.
        #expect(deviceVectors.contains { $0.salt_hex.hasPrefix("00") })
        #expect(deviceVectors.contains { !$0.salt_hex.hasPrefix("00") })
    }

    /// ConfirmDevice's DeviceSecretVerifierConfig, as pycognito's generate_hash_device makes it.
    @Test(arguments: deviceVectors)
    func theVerifierIsPycognitos(_ v: DeviceVector) throws {
        let verifier = try DeviceVerifier(groupKey: v.group_key, deviceKey: v.device_key, password: v.password, saltHex: v.salt_hex)
        #expect(verifier.passwordVerifier == v.password_verifier)
        #expect(verifier.salt == v.salt)
    }

    /// DEVICE_PASSWORD_VERIFIER's signature, as pycognito's process_device_challenge makes it.
    @Test(arguments: deviceVectors)
    func thePasswordClaimIsPycognitos(_ v: DeviceVector) throws {
        let client = try SRPClient(privateHex: v.private_a)
        let signature = try client.passwordSignature(
            poolName: v.group_key, userID: v.device_key, password: v.password, saltHex: v.salt_hex, serverBHex: v.srp_b,
            secretBlock: v.secret_block, timestamp: v.timestamp)
        #expect(signature == v.signature)
    }

    /// A salt is read as a number, as the SDKs read it: leading zeros do not count.
    @Test func aSaltsLeadingZerosDoNotCount() throws {
        let v = deviceVectors.first { !$0.salt_hex.hasPrefix("00") }!
        let padded = try DeviceVerifier(groupKey: v.group_key, deviceKey: v.device_key, password: v.password, saltHex: "0000" + v.salt_hex)
        #expect(padded.passwordVerifier == v.password_verifier && padded.salt == v.salt)
    }

    @Test func anotherPasswordOrKeyGivesAnotherVerifier() throws {
        let v = deviceVectors[0]
        let right = try DeviceVerifier(groupKey: v.group_key, deviceKey: v.device_key, password: v.password, saltHex: v.salt_hex)
        let wrongPassword = try DeviceVerifier(groupKey: v.group_key, deviceKey: v.device_key, password: v.password + "x", saltHex: v.salt_hex)
        let wrongGroup = try DeviceVerifier(groupKey: v.group_key + "x", deviceKey: v.device_key, password: v.password, saltHex: v.salt_hex)
        #expect(right.passwordVerifier != wrongPassword.passwordVerifier)
        #expect(right.passwordVerifier != wrongGroup.passwordVerifier)
    }

    @Test func randomPasswordsAndSaltsAreTheSDKsShape() throws {
        let passwords = try (0..<8).map { _ in try DeviceVerifier.randomPassword() }
        #expect(Set(passwords).count == 8)
        #expect(passwords.allSatisfy { Data(base64Encoded: $0)?.count == 40 })
        let salts = try [DeviceVerifier.randomSaltHex(), DeviceVerifier.randomSaltHex()]
        #expect(salts[0].count == 32 && salts[0] != salts[1])
    }
}

@Suite struct RememberedDeviceTests {
    let now: Int64 = 1_800_000_000
    let profile = testProfile
    let newDevice = NewDeviceMetadata(deviceKey: "us-east-1_new-device", deviceGroupKey: "-group")

    func tokens(newDevice: NewDeviceMetadata? = nil, username: String = "alice") -> AuthOutcome {
        .authenticated(AuthenticationResult(
            accessToken: TestJWT.access(iat: now, lifetime: 3600, username: username), idToken: TestJWT.id(iat: now, lifetime: 3600),
            refreshToken: "r1", newDevice: newDevice))
    }

    func manager(_ store: InMemoryTokenStore, _ cognito: FakeCognito, warnings: Warnings = Warnings()) -> TokenManager {
        makeManager(store: store, cognito: cognito, profile: profile, clock: FakeClock(now), warn: { warnings.add($0) })
    }

    final class Warnings: @unchecked Sendable {
        var lines: [String] = []
        func add(_ line: String) { lines.append(line) }
    }

    /// A confirmed device of alice's in the store, as a sign-in leaves it.
    func storedDevice(_ store: InMemoryTokenStore, username: String = "alice", confirmed: Bool = true, withoutMFA: Bool? = nil) throws
        -> RememberedDevice
    {
        let v = deviceVectors[0]
        let device = RememberedDevice(
            key: v.device_key, groupKey: v.group_key, password: v.password, username: username, signInName: username, confirmed: confirmed,
            withoutMFA: withoutMFA)
        try store.write(.device, profile: "default", secret: device.json, context: ItemContext(userPoolID: profile.userPoolID, clientID: profile.clientID, username: username))
        return device
    }

    func passwordVerifierChallenge() -> AuthOutcome {
        let v = srpVectors[0]
        return .challenge(
            name: "PASSWORD_VERIFIER", session: nil,
            parameters: ["SALT": v.salt, "SRP_B": v.srp_b, "SECRET_BLOCK": v.secret_block, "USER_ID_FOR_SRP": "alice", "USERNAME": "alice"])
    }

    /// A sign-in that asks for MFA (an authenticator's code), then ends with `end`.
    func asksMFA(_ cognito: FakeCognito, then end: AuthOutcome) {
        cognito.signIn.onSignIn(.success(.challenge(name: "SOFTWARE_TOKEN_MFA", session: "m1", parameters: [:])))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(end)] }
    }

    @Test func aNewDeviceIsConfirmedWithAVerifierOfItsStoredPassword() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        asksMFA(cognito, then: tokens(newDevice: newDevice))
        let signedIn = try manager(store, cognito).signIn(
            username: "alice", password: "pw", flow: .password, device: DeviceOptions(name: "laptop"), answers: ScriptedAnswers(code: "123456"))

        #expect(signedIn.device == .remembered(name: "laptop"))
        #expect(cognito.devices.state.withLock { $0.calls } == ["confirm us-east-1_new-device laptop"])
        let device = try #require(try manager(store, cognito).rememberedDevice())
        #expect(device.key == newDevice.deviceKey && device.groupKey == newDevice.deviceGroupKey && device.confirmed)
        #expect(device.username == "alice" && device.name == "laptop" && device.withoutMFA == nil)
        // The verifier Cognito got is of the password kept, over its salt.
        let sent = try #require(cognito.devices.state.withLock { $0.verifiers.first })
        let saltHex = Data(base64Encoded: sent.salt)!.map { String(format: "%02x", $0) }.joined()
        #expect(try DeviceVerifier(groupKey: "-group", deviceKey: newDevice.deviceKey, password: device.password, saltHex: saltHex) == sent)
        // Stored before the tokens (a refresh needs it), unconfirmed; the
        // tokens are stored before ConfirmDevice and the question, which
        // cannot cost the sign-in; then the device again, confirmed.
        #expect(store.writes == ["default/device", "default/refresh", "default/id", "default/access", "default/device"])
        #expect(!"\(device)".contains(device.password) && !String(reflecting: device).contains(device.password))
    }

    @Test(arguments: [(nil, false, "not_remember"), (nil, true, "remember"), (true, false, "remember"), (false, true, "not_remember")] as [(Bool?, Bool, String)])
    func whereTheUserChoosesTheFlagOrTheQuestionDecides(flag: Bool?, answer: Bool, sent: String) throws {
        let cognito = FakeCognito()
        cognito.devices.state.withLock { $0.userChoosesDevice = true }
        asksMFA(cognito, then: tokens(newDevice: newDevice))
        let answers = ScriptedAnswers(code: "123456", remember: answer)
        let signedIn = try manager(InMemoryTokenStore(), cognito).signIn(
            username: "alice", password: "pw", flow: .password, device: DeviceOptions(name: "laptop", remember: flag), answers: answers)
        #expect(cognito.devices.state.withLock { $0.calls }.last == "\(sent) us-east-1_new-device")
        #expect(answers.seen.rememberQuestions == (flag == nil ? ["laptop"] : []))
        #expect(signedIn.device == (sent == "remember" ? .remembered(name: "laptop") : .notRemembered(name: "laptop")))
    }

    /// A remembered device only skips MFA: a user asked for none is not
    /// asked whether to remember it, nor told of it; it is still confirmed
    /// (refreshes need it), and remembered only as the pool or the flag says.
    @Test(arguments: [(nil, "not_remember"), (true, "remember"), (false, "not_remember")] as [(Bool?, String)])
    func aUserWithoutMFAIsNeitherAskedNorTold(flag: Bool?, sent: String) throws {
        let cognito = FakeCognito()
        cognito.devices.state.withLock { $0.userChoosesDevice = true }
        cognito.signIn.onSignIn(.success(tokens(newDevice: newDevice)))
        let answers = ScriptedAnswers(remember: true)
        let store = InMemoryTokenStore()
        let signedIn = try manager(store, cognito).signIn(
            username: "alice", password: "pw", flow: .password, device: DeviceOptions(name: "laptop", remember: flag), answers: answers)
        #expect(answers.seen.rememberQuestions == [])
        #expect(signedIn.device == nil)
        #expect(cognito.devices.state.withLock { $0.calls } == ["confirm us-east-1_new-device laptop", "\(sent) us-east-1_new-device"])
        let kept = try #require(try manager(store, cognito).rememberedDevice())
        #expect(kept.confirmed && kept.withoutMFA == true)
    }

    @Test func aUserWithoutMFAIsWarnedOfAFailedConfirmationWithoutAWordOfMFA() throws {
        let cognito = FakeCognito()
        cognito.devices.state.withLock { $0.error = .service(code: "InvalidParameterException", message: "bad verifier", httpStatus: 400) }
        cognito.signIn.onSignIn(.success(tokens(newDevice: newDevice)))
        let warnings = Warnings()
        let signedIn = try manager(InMemoryTokenStore(), cognito, warnings: warnings).signIn(
            username: "alice", password: "pw", flow: .password, answers: ScriptedAnswers())
        #expect(signedIn.device == nil)
        #expect(warnings.lines.count == 1 && warnings.lines[0].contains("bad verifier") && !warnings.lines[0].contains("MFA"))
    }

    /// Told as skipping MFA unless the sign-in that made the device asked
    /// none (and an item from before that knows nothing of it is told).
    @Test(arguments: [nil, false, true] as [Bool?])
    func aRememberedDeviceProvesItselfInsteadOfMFA(madeWithoutMFA: Bool?) throws {
        let store = InMemoryTokenStore()
        let device = try storedDevice(store, withoutMFA: madeWithoutMFA)
        let v = deviceVectors[0]
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(passwordVerifierChallenge()))
        cognito.signIn.challengeAnswers.withLock {
            $0 = [
                .success(.challenge(name: "DEVICE_SRP_AUTH", session: "d1", parameters: ["USERNAME": "alice"])),
                .success(.challenge(
                    name: "DEVICE_PASSWORD_VERIFIER", session: "d2",
                    parameters: ["USERNAME": "alice", "SALT": v.salt_hex, "SRP_B": v.srp_b, "SECRET_BLOCK": v.secret_block, "DEVICE_KEY": v.device_key])),
                .success(tokens()),
            ]
        }
        let signedIn = try manager(store, cognito).signIn(username: "alice", password: "pw", flow: .srp, answers: ScriptedAnswers())

        #expect(signedIn.device == (madeWithoutMFA == true ? nil : .signedInAsRemembered))
        #expect(cognito.deviceKeysSent.all == [device.key])
        let sent = cognito.signIn.responses.withLock { $0 }
        #expect(sent.map(\.0) == ["PASSWORD_VERIFIER", "DEVICE_SRP_AUTH", "DEVICE_PASSWORD_VERIFIER"])
        #expect(sent.allSatisfy { $0.1["DEVICE_KEY"] == device.key })
        #expect(sent[1].1["SRP_A"] != nil && sent[1].1["SRP_A"] != sent[0].1["SRP_A"])
        #expect(sent[2].1["TIMESTAMP"] == SRPClient.timestamp(now))
        #expect(Data(base64Encoded: sent[2].1["PASSWORD_CLAIM_SIGNATURE"] ?? "")?.count == 32)
        #expect(sent.allSatisfy { $0.1.values.allSatisfy { !$0.contains(device.password) } })  // the device password is never sent
        #expect(try manager(store, cognito).rememberedDevice() == device)
    }

    @Test func aDeviceCognitoNoLongerKnowsIsDeletedAndTheSignInMadeWithoutIt() throws {
        let store = InMemoryTokenStore()
        let device = try storedDevice(store)
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.failure(.service(code: "ResourceNotFoundException", message: "Device does not exist.", httpStatus: 400)))
        cognito.signIn.onSignIn(.success(.challenge(name: "SOFTWARE_TOKEN_MFA", session: "s1", parameters: [:])))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(tokens())] }
        let warnings = Warnings()
        try manager(store, cognito, warnings: warnings).signIn(
            username: "alice", password: "pw", flow: .password, answers: ScriptedAnswers(code: "123456"))

        #expect(cognito.deviceKeysSent.all == [device.key, nil])
        #expect(cognito.signIn.state.withLock { $0.calls.count } == 2)
        #expect(try store.read(.device, profile: "default") == nil)
        #expect(warnings.lines.count == 1 && warnings.lines[0].contains("no longer knows this machine"))
    }

    /// Another sign-in of the profile, storing bob's device while this one runs.
    func anotherSignInStoresItsDevice(_ store: InMemoryTokenStore) -> @Sendable () -> Void {
        let device = RememberedDevice(key: "us-east-1_bobs", groupKey: "-g", password: "p", username: "bob", signInName: "bob", confirmed: true)
        let context = ItemContext(userPoolID: profile.userPoolID, clientID: profile.clientID, username: "bob")
        return { _ = try? store.write(.device, profile: "default", secret: device.json, context: context) }
    }

    @Test func aDeviceStoredByAConcurrentSignInSurvivesTheConfirmation() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        asksMFA(cognito, then: tokens(newDevice: newDevice))
        cognito.meanwhile.queue.withLock { $0 = [("confirm", anotherSignInStoresItsDevice(store))] }
        let signedIn = try manager(store, cognito).signIn(
            username: "alice", password: "pw", flow: .password, device: DeviceOptions(name: "laptop"), answers: ScriptedAnswers(code: "123456"))

        #expect(signedIn.device == .failed(TokenManager.deviceReplaced))
        #expect(try manager(store, cognito).rememberedDevice()?.key == "us-east-1_bobs")
    }

    @Test func aRefusedDeviceReplacedMeanwhileIsNotDeleted() throws {
        let store = InMemoryTokenStore()
        _ = try storedDevice(store)
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.failure(.service(code: "ResourceNotFoundException", message: "Device does not exist.", httpStatus: 400)))
        cognito.signIn.onSignIn(.success(tokens()))
        let keptUntilTheRetry = Mutex<String?>(nil)
        let manager = manager(store, cognito)
        cognito.meanwhile.queue.withLock {
            $0 = [
                ("sign-in", anotherSignInStoresItsDevice(store)),
                ("sign-in", { keptUntilTheRetry.withLock { $0 = (try? manager.rememberedDevice())??.key } }),
            ]
        }
        try manager.signIn(username: "alice", password: "pw", flow: .password, answers: ScriptedAnswers())
        // The refused device was no longer the stored one: the other
        // sign-in's stayed (this sign-in's tokens, saved later, replace it).
        #expect(keptUntilTheRetry.withLock { $0 } == "us-east-1_bobs")
    }

    @Test func theRetryDoesNotAskForThePasswordAgain() throws {
        let store = InMemoryTokenStore()
        _ = try storedDevice(store)
        let cognito = FakeCognito()
        // Signed in twice: with the device, then without it.
        cognito.signIn.onSignIn(.success(passwordVerifierChallenge()))
        cognito.signIn.onSignIn(.success(passwordVerifierChallenge()))
        cognito.signIn.challengeAnswers.withLock {
            $0 = [.failure(.service(code: "ResourceNotFoundException", message: "Device does not exist.", httpStatus: 400)), .success(tokens())]
        }
        var reads = 0
        try manager(store, cognito).signIn(
            username: "alice", password: {
                reads += 1
                return "pw"
            }, flow: .srp, answers: ScriptedAnswers())
        #expect(reads == 1)
        #expect(cognito.signIn.responses.withLock { $0 }.map { $0.1["DEVICE_KEY"] != nil } == [true, false])
    }

    @Test func aWrongPasswordDoesNotCostTheDevice() throws {
        let store = InMemoryTokenStore()
        _ = try storedDevice(store)
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.failure(.service(code: "NotAuthorizedException", message: "Incorrect username or password.", httpStatus: 400)))
        #expect(throws: AuthError.self) {
            try manager(store, cognito).signIn(username: "alice", password: "wrong", flow: .password, answers: ScriptedAnswers())
        }
        #expect(try store.read(.device, profile: "default") != nil)
        #expect(cognito.signIn.state.withLock { $0.calls.count } == 1)
    }

    @Test func aDeviceFailingItsProofIsDeleted() throws {
        let store = InMemoryTokenStore()
        _ = try storedDevice(store)
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(name: "DEVICE_SRP_AUTH", session: "d1", parameters: ["USERNAME": "alice"])))
        cognito.signIn.onSignIn(.success(tokens()))
        cognito.signIn.challengeAnswers.withLock {
            $0 = [.failure(.service(code: "NotAuthorizedException", message: "Incorrect username or password.", httpStatus: 400))]
        }
        let warnings = Warnings()
        try manager(store, cognito, warnings: warnings).signIn(username: "alice", password: "pw", flow: .password, answers: ScriptedAnswers())
        #expect(try store.read(.device, profile: "default") == nil)
        #expect(cognito.deviceKeysSent.all.map { $0 != nil } == [true, false])
        #expect(warnings.lines.count == 1)
    }

    /// A wrong client secret, or a spent session, at the device's challenge is no fault of the device's.
    @Test(arguments: ["Unable to verify secret hash for client client123", "Invalid session for the user, session is expired."])
    func otherRefusalsAtTheDeviceChallengeKeepTheDevice(_ message: String) throws {
        let store = InMemoryTokenStore()
        _ = try storedDevice(store)
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(name: "DEVICE_SRP_AUTH", session: "d1", parameters: ["USERNAME": "alice"])))
        cognito.signIn.challengeAnswers.withLock { $0 = [.failure(.service(code: "NotAuthorizedException", message: message, httpStatus: 400))] }
        #expect(throws: AuthError.self) {
            try manager(store, cognito).signIn(username: "alice", password: "pw", flow: .password, answers: ScriptedAnswers())
        }
        #expect(try store.read(.device, profile: "default") != nil)
    }

    /// Offered by the name typed (an alias); when Cognito signs in someone
    /// else by it, that session does not keep the device.
    @Test func aDeviceOfferedByAnAliasGoesWhenAnotherUserSignsIn() throws {
        let store = InMemoryTokenStore()
        _ = try storedDevice(store)
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(tokens(username: "bob")))
        let signedIn = try manager(store, cognito).signIn(username: "alice", password: "pw", flow: .password, answers: ScriptedAnswers())
        #expect(signedIn.device == nil)
        #expect(try store.read(.device, profile: "default") == nil)
    }

    /// Another user's device is never offered, and a sign-in that leaves no
    /// device deletes it: it is the previous user's.
    @Test func anotherUsersDeviceIsNotOfferedAndGoes() throws {
        let store = InMemoryTokenStore()
        _ = try storedDevice(store, username: "bob")
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(tokens()))
        let signedIn = try manager(store, cognito).signIn(username: "alice", password: "pw", flow: .password, answers: ScriptedAnswers())
        #expect(cognito.deviceKeysSent.all == [nil])
        #expect(signedIn.device == nil)
        #expect(try store.read(.device, profile: "default") == nil)
    }

    @Test func aFailedConfirmationKeepsTheTokensAndTheKeyForRefreshes() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        cognito.devices.state.withLock { $0.error = .service(code: "InvalidParameterException", message: "bad verifier", httpStatus: 400) }
        asksMFA(cognito, then: tokens(newDevice: newDevice))
        let signedIn = try manager(store, cognito).signIn(
            username: "alice", password: "pw", flow: .password, answers: ScriptedAnswers(code: "123456"))
        guard case .failed(let reason) = signedIn.device else { Issue.record("no failure: \(String(describing: signedIn.device))"); return }
        #expect(reason.contains("bad verifier"))
        #expect(try store.read(.refresh, profile: "default") == "r1")
        let device = try #require(try manager(store, cognito).rememberedDevice())
        #expect(!device.confirmed)
        // Not offered at the next sign-in; sent with refreshes.
        cognito.signIn.onSignIn(.success(tokens()))
        cognito.session.modernRefreshResults.withLock { $0 = [.success(AuthenticationResult(accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: nil, refreshToken: nil))] }
        try manager(store, cognito).refresh()
        #expect(cognito.deviceKeysSent.all == [nil, newDevice.deviceKey])
    }

    @Test func refreshesSendTheDeviceKeyByBothActions() throws {
        let store = InMemoryTokenStore()
        let device = try storedDevice(store)
        try store.write(.refresh, profile: "default", secret: "r1", context: ItemContext(userPoolID: profile.userPoolID, clientID: profile.clientID, username: "alice"))
        let cognito = FakeCognito()
        let fresh = AuthenticationResult(accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: nil, refreshToken: nil)
        cognito.session.modernRefreshResults.withLock { $0 = [.success(fresh)] }
        try manager(store, cognito).refresh()
        // Where GetTokensFromRefreshToken is missing: REFRESH_TOKEN_AUTH's DEVICE_KEY.
        cognito.session.onRefresh(.success(fresh))
        try manager(store, cognito).refresh()
        #expect(cognito.deviceKeysSent.all == [device.key, device.key, device.key])
    }

    @Test func signOutKeepsTheDeviceAndForgettingTheProfileDeletesIt() throws {
        let store = InMemoryTokenStore()
        _ = try storedDevice(store)
        let cognito = FakeCognito()
        try manager(store, cognito).signOut(.local)
        #expect(try store.read(.device, profile: "default") != nil)
        try manager(store, cognito).signOut(.local, forgettingDevice: true)
        #expect(try store.read(.device, profile: "default") == nil)
    }

    @Test func devicesAreListedOverEveryPageWithThisMachineMarked() throws {
        let store = InMemoryTokenStore()
        let device = try storedDevice(store)
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: now, lifetime: 3600), context: ItemContext(userPoolID: profile.userPoolID, clientID: profile.clientID, username: "alice"))
        let cognito = FakeCognito()
        let other = UserDevice(key: "us-east-1_other", name: "desktop", lastSeen: now, remembered: false)
        let this = UserDevice(key: device.key, name: "laptop", lastSeen: now, remembered: true)
        cognito.devices.state.withLock { $0.pages = [[other], [this]] }
        let (devices, current) = try manager(store, cognito).devices()
        #expect(devices == [other, this])
        #expect(current == device.key)
        #expect(cognito.devices.state.withLock { $0.calls } == ["list -", "list 1"])
    }

    @Test func forgettingThisMachineDeletesItsItemAndAnotherDeviceLeavesIt() throws {
        let store = InMemoryTokenStore()
        let device = try storedDevice(store)
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: now, lifetime: 3600), context: ItemContext(userPoolID: profile.userPoolID, clientID: profile.clientID, username: "alice"))
        let cognito = FakeCognito()
        #expect(try manager(store, cognito).forgetDevice("us-east-1_other") == "us-east-1_other")
        #expect(try store.read(.device, profile: "default") != nil)
        #expect(try manager(store, cognito).forgetDevice() == device.key)
        #expect(try store.read(.device, profile: "default") == nil)
        #expect(cognito.devices.state.withLock { $0.calls } == ["forget us-east-1_other", "forget \(device.key)"])
        #expect(throws: AuthError.noDevice(profile: "default")) { try manager(store, cognito).forgetDevice() }
    }

    @Test func thisMachineForgottenElsewhereOnlyLosesItsItem() throws {
        let store = InMemoryTokenStore()
        let device = try storedDevice(store)
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: now, lifetime: 3600), context: ItemContext(userPoolID: profile.userPoolID, clientID: profile.clientID, username: "alice"))
        let cognito = FakeCognito()
        cognito.devices.state.withLock { $0.error = .service(code: "ResourceNotFoundException", message: "Device does not exist.", httpStatus: 400) }
        // Another device's key that Cognito does not know is an error.
        #expect(throws: AuthError.self) { try manager(store, cognito).forgetDevice("us-east-1_other") }
        #expect(try manager(store, cognito).forgetDevice() == device.key)
        #expect(try store.read(.device, profile: "default") == nil)
    }
}
