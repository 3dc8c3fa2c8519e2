import Testing
@testable import CogCredRead

/// A command's deadline: what is left of it, and the time given back (the
/// person's, which the network's budget does not pay for).
@Suite struct DeadlineTests {
    @Test func whatIsLeftNeverGoesBelowZero() {
        #expect(Deadline(secondsFromNow: -5).remaining == 0)
        let deadline = Deadline(secondsFromNow: 30)
        #expect(deadline.remaining > 29 && deadline.remaining <= 30)
    }

    @Test func theTimeGivenBackIsLeftAgain() {
        let spent = Deadline(secondsFromNow: -5, givingBack: { 20 })
        #expect(spent.remaining > 14 && spent.remaining <= 15)
        #expect(Deadline(secondsFromNow: 1, givingBack: { 0 }).remaining <= 1)
    }
}
