import Testing
@testable import CogCredWrite
@testable import CogCredRead

/// `cog-cred unlock`'s rules over a fake keyring: the password is asked for
/// only when the keyring is locked and sent only to gnome-keyring; each
/// answer has its failure and exit category. The real gnome-keyring is
/// test_unlock.py's.
@Suite struct UnlockKeyringTests {
    final class FakeKeyring: KeyringPasswordUnlocking {
        var locked: Result<Bool, SecretServiceError>
        /// What the keyring answers to a password, and whether that unlocks it.
        var answer: Result<PasswordUnlock, SecretServiceError> = .success(.unlocked)
        var staysLocked = false
        var passwordsSent: [[UInt8]] = []

        init(locked: Result<Bool, SecretServiceError>) { self.locked = locked }

        func defaultCollectionIsLocked() throws(SecretServiceError) -> Bool { try locked.get() }

        func unlockDefaultCollection(password: [UInt8]) throws(SecretServiceError) -> PasswordUnlock {
            passwordsSent.append(password)
            let result = try answer.get()
            if result == .unlocked && !staysLocked { locked = .success(false) }
            return result
        }
    }

    func run(_ keyring: FakeKeyring, provider: SecretServiceProvider? = .gnomeKeyring, password: String = "pw")
        throws -> (UnlockKeyring.Outcome, asked: Int)
    {
        var asked = 0
        let outcome = try UnlockKeyring(keyring: keyring, provider: { provider }).run {
            asked += 1
            return Array(password.utf8)
        }
        return (outcome, asked)
    }

    func failure(_ body: () throws -> Void) -> (any CogCredFailure)? {
        do {
            try body()
            return nil
        } catch {
            return error as? any CogCredFailure
        }
    }

    @Test func aLockedKeyringIsUnlockedWithThePassword() throws {
        let keyring = FakeKeyring(locked: .success(true))
        let (outcome, asked) = try run(keyring)
        #expect(outcome == .unlocked && asked == 1)
        #expect(keyring.passwordsSent == [Array("pw".utf8)])
    }

    @Test func anUnlockedKeyringIsSaidSoAndNoPasswordIsAskedOrSent() throws {
        let keyring = FakeKeyring(locked: .success(false))
        let (outcome, asked) = try run(keyring)
        #expect(outcome == .alreadyUnlocked && asked == 0 && keyring.passwordsSent.isEmpty)
    }

    @Test func aWrongPasswordIs77() {
        let keyring = FakeKeyring(locked: .success(true))
        keyring.answer = .success(.denied)
        let error = failure { _ = try run(keyring) }
        #expect(error as? UnlockKeyringError == .wrongPassword)
        #expect(error?.category == .notAuthenticated)
    }

    @Test func aServiceWithoutTheMethodIsNotGnomeKeyring69() {
        let keyring = FakeKeyring(locked: .success(true))
        keyring.answer = .success(.notSupported)
        let error = failure { _ = try run(keyring, provider: nil) }
        #expect(error as? UnlockKeyringError == .notGnomeKeyring(provider: nil))
        #expect(error?.category == .secretServiceUnavailable)
        #expect(error?.message.contains("docs/headless.md") == true)
    }

    @Test(arguments: [SecretServiceProvider.keePassXC, .kWallet, .other("python3")])
    func anotherProgramNeverGetsThePassword(provider: SecretServiceProvider) {
        let keyring = FakeKeyring(locked: .success(true))
        let error = failure { _ = try run(keyring, provider: provider) }
        #expect(error as? UnlockKeyringError == .notGnomeKeyring(provider: provider))
        #expect(error?.category == .secretServiceUnavailable)
        #expect(keyring.passwordsSent.isEmpty)
    }

    @Test(arguments: [SecretServiceError.noSessionBus, .serviceUnavailable("no owner"), .noDefaultCollection])
    func noKeyringToUnlockIs69SayingGnomeKeyringOnly(error: SecretServiceError) {
        let keyring = FakeKeyring(locked: .failure(error))
        let failure = failure { _ = try run(keyring, provider: nil) }
        #expect(failure as? UnlockKeyringError == .noKeyring(error))
        #expect(failure?.category == .secretServiceUnavailable)
        #expect(failure?.message.contains("gnome-keyring only") == true)
        #expect(keyring.passwordsSent.isEmpty)
    }

    @Test func anEmptyPasswordIs65AndNotSent() {
        let keyring = FakeKeyring(locked: .success(true))
        let error = failure { _ = try run(keyring, password: "") }
        #expect(error?.category == .dataError && keyring.passwordsSent.isEmpty)
    }

    @Test func aKeyringStillLockedAfterTakingThePasswordIsNoSuccess() {
        let keyring = FakeKeyring(locked: .success(true))
        keyring.staysLocked = true
        let error = failure { _ = try run(keyring) }
        #expect(error as? UnlockKeyringError == .stillLocked)
    }

    @Test func theLockedMessagesNameTheUnlockCommand() {
        for error in [SecretServiceError.locked, .unlockDeclined] {
            #expect(error.message.contains("`cog-cred unlock --password-stdin`"))
            #expect(!error.message.contains("gnome-keyring-daemon --unlock"))
        }
    }
}
