import Foundation
import Testing
import CogCredTestSupport
@testable import CogCredRead

/// What the front runs as cog-cred-cli: a link is checked where it is
/// before it is followed.
@Suite struct TrustedProgramTests {
    /// A private directory holding an executable `program` and a link to it.
    func layout() throws -> (directory: String, program: String, link: String) {
        let directory = TestDirectories.path("trusted")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        let program = directory + "/program"
        try "#!/bin/sh\n".write(toFile: program, atomically: false, encoding: .utf8)
        chmod(program, 0o755)
        let link = directory + "/link"
        #expect(symlink("program", link) == 0)
        return (directory, program, link)
    }

    @Test func aLinkOfTheUsersInASafeDirectoryIsFollowed() throws {
        let (directory, program, link) = try layout()
        #expect(try trustedProgram(link).get() == realPath(program))
        // Relative, through "..", and a link to a link.
        #expect(symlink(link, directory + "/again") == 0)
        #expect(try trustedProgram(directory + "/../" + (directory as NSString).lastPathComponent + "/again").get() == realPath(program))
    }

    @Test func aLinkInADirectoryOthersCanWriteIsRefusedBeforeItIsFollowed() throws {
        let (directory, _, link) = try layout()
        chmod(directory, 0o777)
        guard case .failure(let problem) = trustedProgram(link) else { Issue.record("followed"); return }
        #expect(problem.reason.contains("holds the link \(link)"))
        #expect(problem.reason.contains("can be written by others"))
    }

    @Test(.enabled(if: getuid() == 0, "a link another user owns needs root"))
    func aLinkOfAnotherUserIsRefused() throws {
        let (_, _, link) = try layout()
        #expect(lchown(link, 65534, 65534) == 0)
        guard case .failure(let problem) = trustedProgram(link) else { Issue.record("followed"); return }
        #expect(problem.reason == "the link \(link) belongs to another user")
    }

    @Test func aLoopOfLinksEnds() throws {
        let (directory, _, _) = try layout()
        #expect(symlink("b", directory + "/a") == 0)
        #expect(symlink("a", directory + "/b") == 0)
        guard case .failure = trustedProgram(directory + "/a") else { Issue.record("a loop was followed"); return }
    }
}

/// The lock directory's check is of the directory opened.
@Suite struct OpenedDirectoryTests {
    @Test func theWalkStartsAtTheDirectoryOpened() throws {
        let first = TestDirectories.path("opened")
        let second = TestDirectories.path("other")
        for directory in [first, second] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            chmod(directory, 0o700)
        }
        let fd = open(first, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        #expect(unsafeDirectory(from: first, opened: fd) == nil)
        // The path now names another directory than the one opened.
        #expect(unsafeDirectory(from: second, opened: fd) == .notTheOneOpened(realPath(second)!))
        #expect(rename(first, first + ".moved") == 0)
        #expect(unsafeDirectory(from: first, opened: fd) == .notTheOneOpened(first))
    }
}

/// A URL's credentials are never shown.
@Suite struct URLCredentialsTests {
    @Test(arguments: [
        ("https://alice:s3cret@cognito.example.com/", "https://cognito.example.com/"),
        ("http://alice@127.0.0.1:5000/pool?x=a@b", "http://127.0.0.1:5000/pool?x=a@b"),
        ("http://al%40ice:p%40ss@[::1]:9/", "http://[::1]:9/"),
        ("https://cognito-idp.us-east-1.amazonaws.com/", "https://cognito-idp.us-east-1.amazonaws.com/"),
        // libcurl's own words, with the proxy setting it could not read.
        ("Unsupported proxy syntax in 'http://al ice:s3cret@127.0.0.1:1'", "Unsupported proxy syntax in 'http://127.0.0.1:1'"),
        ("Unsupported proxy syntax in 'al ice:s3cret@127.0.0.1:1'", "Unsupported proxy syntax in '127.0.0.1:1'"),
        ("Unsupported proxy scheme for 'htp://alice:s3cret@proxy:3128'", "Unsupported proxy scheme for 'htp://proxy:3128'"),
        ("cannot reach Cognito at http://u:p@h:1/ (Failed to connect to h port 1)", "cannot reach Cognito at http://h:1/ (Failed to connect to h port 1)"),
        ("a@b and 'c' with no URL", "a@b and 'c' with no URL"),
        ("Failed to connect to 127.0.0.1 port 1: Couldn't connect to server", "Failed to connect to 127.0.0.1 port 1: Couldn't connect to server"),
        // A password with an unencoded '/' (no client reads it so), and a message libcurl cut off.
        ("cannot reach Cognito at http://u:pa/ss@h:1/ (x)", "cannot reach Cognito at http://h:1/ (x)"),
        ("Unsupported proxy syntax in 'http://alice:a-very-long-pass", "Unsupported proxy syntax in '…"),
    ])
    func theUserinfoGoes(text: String, shown: String) {
        #expect(withoutURLCredentials(text) == shown)
    }
}
