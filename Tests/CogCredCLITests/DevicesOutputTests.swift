import Testing
import CogCredWrite
@testable import cog_cred_cli

/// `cog-cred devices` prints what Cognito said of each device: its name and
/// its key reach the terminal without the characters that could take it over.
@Suite struct DevicesOutputTests {
    @Test func aDevicesNameAndKeyLoseTheirControlCharacters() {
        let device = UserDevice(
            key: "us-east-1_\u{1B}]0;owned\u{07}abc\u{202E}", name: "lap\u{1B}[2Jtop", lastSeen: nil, remembered: true)
        let line = Devices.List.line(device, current: device.key)
        #expect(line == "* lap[2Jtop  us-east-1_]0;ownedabc  -  remembered")
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}" })
    }
}
