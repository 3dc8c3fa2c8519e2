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

/// Files written or appended to where someone else may have been first.
@Suite struct FilesOthersMayHavePlacedTests {
    func directory() throws -> String {
        let directory = TestDirectories.path("files")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The temporary file is a new one of a random name (O_EXCL): a file
    /// planted at the name a process id would give is neither truncated nor
    /// made the new file.
    @Test func aWholeFileIsWrittenThroughANewTemporaryFileNeverAPlantedOne() throws {
        let path = try directory() + "/config.json"
        let planted = path + ".tmp-\(getpid())"
        try "planted\n".write(toFile: planted, atomically: false, encoding: .utf8)
        var plantedInfo = stat()
        #expect(stat(planted, &plantedInfo) == 0)
        #expect(writeAtomically(Array("{}\n".utf8), to: path, mode: 0o600) == nil)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{}\n")
        #expect(try String(contentsOfFile: planted, encoding: .utf8) == "planted\n")
        var written = stat()
        #expect(stat(path, &written) == 0 && written.st_ino != plantedInfo.st_ino && written.st_mode & 0o777 == 0o600)
        // Nothing else is left beside it.
        let left = try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)
        #expect(left.sorted() == ["config.json", "config.json.tmp-\(getpid())"])
    }

    @Test func aLogIsAppendedToOnlyWhenItIsAFileOfTheUsersOwnAndNoLink() throws {
        let directory = try directory()
        let own = directory + "/own.log"
        guard case .success(let fd) = openOwnFileForAppending(own) else {
            Issue.record("a new file of one's own was refused")
            return
        }
        close(fd)
        var info = stat()
        #expect(stat(own, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let victim = directory + "/victim"
        try "mine\n".write(toFile: victim, atomically: false, encoding: .utf8)
        #expect(symlink(victim, directory + "/link.log") == 0)
        guard case .failure(let link) = openOwnFileForAppending(directory + "/link.log") else {
            Issue.record("a link was followed")
            return
        }
        #expect(link.reason == "it is a symbolic link; name the file itself")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "mine\n")
        guard case .failure(let notAFile) = openOwnFileForAppending(directory) else {
            Issue.record("a directory was taken")
            return
        }
        #expect(!notAFile.reason.isEmpty)
        // Another user's file (root can make one).
        if getuid() == 0 {
            let theirs = directory + "/theirs.log"
            try "".write(toFile: theirs, atomically: false, encoding: .utf8)
            #expect(chown(theirs, 65534, 65534) == 0)
            guard case .failure(let other) = openOwnFileForAppending(theirs) else {
                Issue.record("another user's file was taken")
                return
            }
            #expect(other.reason == "it belongs to uid 65534, not to you")
        }
    }
}
