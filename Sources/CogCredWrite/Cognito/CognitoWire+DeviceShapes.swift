#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The JSON shapes of the device actions (ConfirmDevice,
/// UpdateDeviceStatus, ListDevices, ForgetDevice).
extension CognitoWire {
    struct ConfirmDeviceRequest: Encodable {
        struct Verifier: Encodable {
            var passwordVerifier: String, salt: String
        }

        var accessToken: String
        var deviceKey: String
        var deviceSecretVerifierConfig: Verifier
        var deviceName: String
    }

    struct ConfirmDeviceResponse: Decodable {
        var userConfirmationNecessary: Bool?
    }

    /// UpdateDeviceStatus (with a status) and ForgetDevice.
    struct DeviceRequest: Encodable {
        var accessToken: String
        var deviceKey: String
        var deviceRememberedStatus: String? = nil

        static func status(remembered: Bool) -> String { remembered ? "remembered" : "not_remembered" }
    }

    struct ListDevicesRequest: Encodable {
        var accessToken: String
        var limit: Int
        var paginationToken: String?
    }

    struct ListDevicesResponse: Decodable {
        struct Device: Decodable {
            struct Attribute: Decodable {
                var name: String
                var value: String?
            }

            var deviceKey: String?
            var deviceAttributes: [Attribute]?
            var deviceCreateDate: Double?
            var deviceLastModifiedDate: Double?
            var deviceLastAuthenticatedDate: Double?

            var userDevice: UserDevice? {
                guard let deviceKey, !deviceKey.isEmpty else { return nil }
                let attributes = Dictionary((deviceAttributes ?? []).map { ($0.name, $0.value ?? "") }) { first, _ in first }
                let seen = deviceLastAuthenticatedDate ?? deviceLastModifiedDate ?? deviceCreateDate
                return UserDevice(
                    key: deviceKey, name: attributes["device_name"], lastSeen: seen.flatMap { Int64(exactly: $0.rounded(.down)) },
                    remembered: attributes["dev:device_remembered_status"] == "remembered")
            }
        }

        var devices: [Device]?
        var paginationToken: String?
    }
}
