// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "cog-cred",
    products: [
        .executable(name: "cog-cred", targets: ["cog-cred"]),
        .library(name: "CogCredCore", targets: ["CogCredCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // Thin executable: parses arguments, wires library objects together,
        // maps failures to exit codes.
        .executableTarget(
            name: "cog-cred",
            dependencies: [
                "CogCredCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // All of the logic, unit-tested with in-memory fakes.
        .target(
            name: "CogCredCore",
            dependencies: ["CSecret", "CCurl", "COpenSSL", "CLinux"]
        ),
        // System library targets: one per C library, each with a shim header
        // that makes the variadic C APIs callable from Swift.
        .systemLibrary(
            name: "CSecret",
            pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev", "libglib2.0-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // prctl and setrlimit for keeping secrets out of core dumps.
        .target(name: "CLinux"),
        .testTarget(
            name: "CogCredCoreTests",
            dependencies: ["CogCredCore"],
            // Read by path from the source tree (see SRPTests).
            exclude: ["Fixtures"]
        ),
    ]
)

// libFuzzer targets, one per parser of untrusted input. Only declared when
// asked for (scripts/fuzz sets COG_CRED_FUZZ), because they link against
// libFuzzer and build with -sanitize=fuzzer.
if Context.environment["COG_CRED_FUZZ"] != nil {
    package.targets.append(.target(name: "CFuzzer", path: "Tests/Fuzz/CFuzzer"))
    for (product, target) in [
        ("fuzz-git-credential", "FuzzGitCredential"), ("fuzz-jwt", "FuzzJWT"),
        ("fuzz-cognito-response", "FuzzCognitoResponse"), ("fuzz-config", "FuzzConfig"),
    ] {
        package.targets.append(.executableTarget(name: target, dependencies: ["CogCredCore", "CFuzzer"], path: "Tests/Fuzz/\(target)"))
        package.products.append(.executable(name: product, targets: [target]))
    }
}
