import Testing
@testable import cog_cred_cli

@Suite struct AgentCommandTests {
    @Test func theShellLineIsWhatShEvaluatesAndQuotedOnlyWhenItMustBe() {
        #expect(Agent.shellLine("COG_CRED_AGENT", "/run/user/1000/cog-cred/agent") == "COG_CRED_AGENT=/run/user/1000/cog-cred/agent; export COG_CRED_AGENT;\n")
        #expect(Agent.shellLine("COG_CRED_AGENT", "/tmp/my dir/it's") == "COG_CRED_AGENT='/tmp/my dir/it'\\''s'; export COG_CRED_AGENT;\n")
        #expect(Agent.shellLine("COG_CRED_AGENT_PID", "4242") == "COG_CRED_AGENT_PID=4242; export COG_CRED_AGENT_PID;\n")
    }

    @Test func theAgentsOptionsParse() throws {
        let agent = try Agent.parse(["--memory", "--daemon", "--socket", "/tmp/x/agent", "--log", "/tmp/x/log"])
        #expect(agent.memory && agent.daemon && agent.socket == "/tmp/x/agent" && agent.log == "/tmp/x/log")
        #expect(throws: (any Error).self) { try Agent.parse(["--socket", ""]) }
    }

    @Test func aLifetimeIsSecondsOrANumberWithSMOrHUpToThirtyDays() throws {
        #expect(Lifetime(argument: "8")?.seconds == 8)
        #expect(Lifetime(argument: "90s")?.seconds == 90)
        #expect(Lifetime(argument: "15m")?.seconds == 900)
        #expect(Lifetime(argument: "720h")?.seconds == 720 * 3600)
        #expect([Lifetime(argument: "8"), Lifetime(argument: "120"), Lifetime(argument: "2h")].map { $0?.described } == ["8 s", "2 min", "2 h"])
        for bad in ["0", "-5", "1d", "", "m", "5 m", "721h", "٣"] { #expect(Lifetime(argument: bad) == nil, "\(bad)") }
        #expect(try Agent.parse(["--memory", "--lifetime", "2h"]).lifetime?.seconds == 7200)
        #expect(throws: (any Error).self) { try Agent.parse(["--stop", "--daemon"]) }
        #expect(try Agent.parse(["--stop", "--socket", "/run/x/agent"]).stop)
    }
}
