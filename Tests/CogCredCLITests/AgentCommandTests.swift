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
}
